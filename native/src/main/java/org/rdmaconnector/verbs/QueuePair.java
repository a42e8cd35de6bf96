package org.rdmaconnector.verbs;

import com.sun.jna.Memory;
import java.nio.ByteOrder;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.jna.IbVerbs;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;
import org.rdmaconnector.verbs.jna.RdmaCma;

/**
 * A reliable-connected queue pair ({@code struct ibv_qp}) created on a {@link CmId} (rdma_create_qp(3)). Posts
 * sends, RDMA writes (with or without immediate data), RDMA reads and receives of ranges of registered memory; their
 * completions arrive on its completion queues with the given {@code wrId}. The peer's regions are named by address
 * and rkey; the kernel's CM gives the queue pair remote write access, and remote read access when the connection's
 * responder resources are more than 0 ({@link ConnectionParameters#defaults()}: 1 each way). Closed before its id, protection domain and completion queues. Thread-safe:
 * posts are serialized per direction.
 */
public final class QueuePair extends NativeResource {
    private final CmId cmId;
    private final long qp;
    private final int qpNumber;
    private final QueuePairCapabilities capabilities;
    private final DeviceContext context;
    // one ibv_send_wr + ibv_sge + bad_wr slot per direction, reused under the lock of each
    private final Memory sendWr = Mem.allocate(Layout.SIZEOF_IBV_SEND_WR + Layout.SIZEOF_IBV_SGE + 8);
    private final Memory recvWr = Mem.allocate(Layout.SIZEOF_IBV_RECV_WR + Layout.SIZEOF_IBV_SGE + 8);

    QueuePair(CmId cmId, long qp, ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
              QueuePairCapabilities capabilities) {
        this.cmId = cmId;
        this.qp = qp;
        this.qpNumber = Mem.getInt(qp + Layout.IBV_QP_QP_NUM);
        this.capabilities = capabilities;
        this.context = pd.context();
        dependOn(cmId);
        dependOn(pd);
        dependOn(sendCq);
        if (recvCq != sendCq) {
            dependOn(recvCq);
        }
    }

    /** The queue pair number (qp_num), as work completions report it. */
    public int qpNumber() {
        return qpNumber;
    }

    /** The sizes the device granted. */
    public QueuePairCapabilities capabilities() {
        return capabilities;
    }

    /** The CM id it belongs to. */
    public CmId cmId() {
        return cmId;
    }

    /**
     * Posts a SEND of {@code length} bytes at {@code offset} of {@code region} (ibv_post_send(3)).
     *
     * @param signaled whether a work completion is generated on success (always on error)
     */
    public void postSend(MemoryRegion region, int offset, int length, long wrId, boolean signaled) {
        post(region, offset, length, wrId, Layout.IBV_WR_SEND, signaled ? Layout.IBV_SEND_SIGNALED : 0, 0, 0, 0);
    }

    /**
     * Posts a SEND whose bytes the device copies when it is posted ({@code IBV_SEND_INLINE}, ibv_post_send(3)): the
     * range may be written again as soon as this returns, and the device need not read host memory for it.
     *
     * @throws IllegalArgumentException when {@code length} is more than the inline data the device granted
     *     ({@link QueuePairCapabilities#maxInlineData()})
     */
    public void postSendInline(MemoryRegion region, int offset, int length, long wrId, boolean signaled) {
        if (length > capabilities.maxInlineData()) {
            throw new IllegalArgumentException("length " + length + " is more than the " + capabilities.maxInlineData()
                + " bytes of inline data this queue pair was granted (MaxInlineData)");
        }
        post(region, offset, length, wrId, Layout.IBV_WR_SEND,
            (signaled ? Layout.IBV_SEND_SIGNALED : 0) | Layout.IBV_SEND_INLINE, 0, 0, 0);
    }

    /** Posts an RDMA WRITE of a local range to {@code remoteAddress} of a peer's region with key {@code rkey}. */
    public void postWrite(MemoryRegion region, int offset, int length, long remoteAddress, int rkey, long wrId,
                          boolean signaled) {
        post(region, offset, length, wrId, Layout.IBV_WR_RDMA_WRITE, signaled ? Layout.IBV_SEND_SIGNALED : 0,
            remoteAddress, rkey, 0);
    }

    /**
     * Posts an RDMA WRITE with immediate data: as {@link #postWrite}, then the peer's next posted receive completes
     * with opcode {@code IBV_WC_RECV_RDMA_WITH_IMM} and {@code immediateData} (host order here and there; network
     * order on the wire).
     */
    public void postWriteWithImmediate(MemoryRegion region, int offset, int length, long remoteAddress, int rkey,
                                       int immediateData, long wrId, boolean signaled) {
        post(region, offset, length, wrId, Layout.IBV_WR_RDMA_WRITE_WITH_IMM,
            signaled ? Layout.IBV_SEND_SIGNALED : 0, remoteAddress, rkey, toNetworkOrder(immediateData));
    }

    /**
     * Posts an RDMA READ of {@code length} bytes at {@code remoteAddress} of a peer's region with key {@code rkey}
     * into a local range.
     *
     * @throws IllegalArgumentException when {@code region} was registered without LOCAL_WRITE (the device writes
     *     the bytes read into it)
     */
    public void postRead(MemoryRegion region, int offset, int length, long remoteAddress, int rkey, long wrId,
                         boolean signaled) {
        if (region != null && !region.access().contains(Access.LOCAL_WRITE)) {
            throw new IllegalArgumentException("an RDMA READ places the bytes read in the local region, which is "
                + "registered without LOCAL_WRITE; register it with LOCAL_WRITE (ibv_reg_mr(3))");
        }
        post(region, offset, length, wrId, Layout.IBV_WR_RDMA_READ, signaled ? Layout.IBV_SEND_SIGNALED : 0,
            remoteAddress, rkey, 0);
    }

    /** {@code value} as the __be32 imm_data holds it, in this JVM's byte order. */
    static int toNetworkOrder(int value) {
        return ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN ? value : Integer.reverseBytes(value);
    }

    private void post(MemoryRegion region, int offset, int length, long wrId, int opcode, int flags,
                      long remoteAddress, int rkey, int immediateData) {
        if (region == null) {
            throw new IllegalArgumentException("region must not be null");
        }
        long address = region.addressOf(offset, length);
        acquire();
        region.acquire();
        try {
            synchronized (sendWr) {
                long wr = Mem.address(sendWr);
                long sge = wr + Layout.SIZEOF_IBV_SEND_WR;
                long bad = sge + Layout.SIZEOF_IBV_SGE;
                putSge(sge, address, length, region.lkey());
                Mem.putLong(wr + Layout.IBV_SEND_WR_WR_ID, wrId);
                Mem.putLong(wr + Layout.IBV_SEND_WR_SG_LIST, sge);
                Mem.putInt(wr + Layout.IBV_SEND_WR_NUM_SGE, 1);
                Mem.putInt(wr + Layout.IBV_SEND_WR_OPCODE, opcode);
                Mem.putInt(wr + Layout.IBV_SEND_WR_SEND_FLAGS, flags);
                Mem.putInt(wr + Layout.IBV_SEND_WR_IMM_DATA, immediateData);
                Mem.putLong(wr + Layout.IBV_SEND_WR_WR_RDMA_REMOTE_ADDR, remoteAddress);
                Mem.putInt(wr + Layout.IBV_SEND_WR_WR_RDMA_RKEY, rkey);
                int rc = context.ops().ibv_post_send(qp, wr, bad);
                if (rc != 0) {
                    throw RdmaErrors.fromReturnCode("ibv_post_send", rc,
                        "qp " + qpNumber + ", " + length + " bytes; the send queue holds " + capabilities.maxSendWr());
                }
            }
        } finally {
            region.release();
            release();
        }
    }

    /** Posts a receive into {@code length} bytes at {@code offset} of {@code region} (ibv_post_recv(3)). */
    public void postReceive(MemoryRegion region, int offset, int length, long wrId) {
        if (region == null) {
            throw new IllegalArgumentException("region must not be null");
        }
        long address = region.addressOf(offset, length);
        acquire();
        region.acquire();
        try {
            synchronized (recvWr) {
                long wr = Mem.address(recvWr);
                long sge = wr + Layout.SIZEOF_IBV_RECV_WR;
                long bad = sge + Layout.SIZEOF_IBV_SGE;
                putSge(sge, address, length, region.lkey());
                Mem.putLong(wr + Layout.IBV_RECV_WR_WR_ID, wrId);
                Mem.putLong(wr + Layout.IBV_RECV_WR_SG_LIST, sge);
                Mem.putInt(wr + Layout.IBV_RECV_WR_NUM_SGE, 1);
                int rc = context.ops().ibv_post_recv(qp, wr, bad);
                if (rc != 0) {
                    throw RdmaErrors.fromReturnCode("ibv_post_recv", rc,
                        "qp " + qpNumber + "; the receive queue holds " + capabilities.maxRecvWr());
                }
            }
        } finally {
            region.release();
            release();
        }
    }

    /**
     * Sets what this queue pair's receiver-not-ready NAKs tell the peer to wait before it sends again
     * (ibv_modify_qp(3) {@code IBV_QP_MIN_RNR_TIMER}, a change the specification allows in RTS). The RDMA CM moves
     * every connection to RTR with {@link RnrTimer#CM_DEFAULT}, 655.36 ms, so set it once the connection is
     * established (after {@link CmId#accept} returns, or on ESTABLISHED after {@link CmId#connect}).
     *
     * @throws RdmaException when the device refuses, for example because the queue pair is no longer in RTS
     */
    public void setMinRnrTimer(RnrTimer timer) {
        if (timer == null) {
            throw new IllegalArgumentException("timer must not be null");
        }
        acquire();
        try (Memory attr = Mem.allocate(Layout.SIZEOF_IBV_QP_ATTR)) {
            attr.setByte(Layout.IBV_QP_ATTR_MIN_RNR_TIMER, (byte) timer.code());
            int rc = IbVerbs.ibv_modify_qp(qp, Mem.address(attr), Layout.IBV_QP_MIN_RNR_TIMER);
            if (rc != 0) {
                throw RdmaErrors.fromReturnCode("ibv_modify_qp(IBV_QP_MIN_RNR_TIMER)", rc,
                    "qp " + qpNumber + ", min_rnr_timer " + timer);
            }
        } finally {
            release();
        }
    }

    /** The queue pair's state, timers and retry counts, as the device reports them now (ibv_query_qp(3)). */
    public QueuePairAttributes query() {
        int mask = Layout.IBV_QP_STATE | Layout.IBV_QP_MIN_RNR_TIMER | Layout.IBV_QP_TIMEOUT | Layout.IBV_QP_RETRY_CNT
            | Layout.IBV_QP_RNR_RETRY;
        acquire();
        try (Memory attr = Mem.allocate(Layout.SIZEOF_IBV_QP_ATTR);
             Memory initAttr = Mem.allocate(Layout.SIZEOF_IBV_QP_INIT_ATTR)) {
            int rc = IbVerbs.ibv_query_qp(qp, Mem.address(attr), mask, Mem.address(initAttr));
            if (rc != 0) {
                throw RdmaErrors.fromReturnCode("ibv_query_qp", rc, "qp " + qpNumber);
            }
            return new QueuePairAttributes(QueuePairState.of(attr.getInt(Layout.IBV_QP_ATTR_QP_STATE)),
                new RnrTimer(attr.getByte(Layout.IBV_QP_ATTR_MIN_RNR_TIMER) & 31),
                Byte.toUnsignedInt(attr.getByte(Layout.IBV_QP_ATTR_TIMEOUT)),
                Byte.toUnsignedInt(attr.getByte(Layout.IBV_QP_ATTR_RETRY_CNT)),
                Byte.toUnsignedInt(attr.getByte(Layout.IBV_QP_ATTR_RNR_RETRY)));
        } finally {
            release();
        }
    }

    private static void putSge(long sge, long address, int length, int lkey) {
        Mem.putLong(sge + Layout.IBV_SGE_ADDR, address);
        Mem.putInt(sge + Layout.IBV_SGE_LENGTH, length);
        Mem.putInt(sge + Layout.IBV_SGE_LKEY, lkey);
    }

    @Override
    protected void destroy() {
        RdmaCma.rdma_destroy_qp(cmId.address());
        cmId.queuePairClosed();
        sendWr.close();
        recvWr.close();
    }

    @Override
    public String toString() {
        return "QueuePair[" + qpNumber + (isClosed() ? ", closed]" : "]");
    }
}
