package org.rdmaconnector.verbs;

import com.sun.jna.Memory;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;
import org.rdmaconnector.verbs.jna.RdmaCma;
import org.rdmaconnector.verbs.jna.Scratch;

/**
 * An RDMA CM identifier ({@code struct rdma_cm_id}, rdma_create_id(3)): the RDMA counterpart of a socket. Its events
 * arrive on its {@link EventChannel}. Active side: {@link #resolveAddress}, {@link #resolveRoute},
 * {@link #createQueuePair}, {@link #connect}; passive side: {@link #bind}, {@link #listen}, and for each
 * CONNECT_REQUEST a new id to {@link #accept} or {@link #reject}. Closing it destroys its queue pair first.
 * Thread-safe.
 */
public final class CmId extends NativeResource {
    private final long id;
    private final PortSpace portSpace;
    private volatile EventChannel channel;
    private volatile QueuePair queuePair;
    // taken by the one createQueuePair that may create the queue pair; given back when it fails or the QP closes
    private final java.util.concurrent.atomic.AtomicBoolean queuePairClaimed =
        new java.util.concurrent.atomic.AtomicBoolean();

    CmId(EventChannel channel, long id, PortSpace portSpace) {
        this.id = id;
        this.portSpace = portSpace;
        this.channel = channel;
        dependOn(channel);
        channel.register(id, this);
    }

    /** The port space it was created in. */
    public PortSpace portSpace() {
        return portSpace;
    }

    /** The event channel its events arrive on (changes with {@link #migrate}). */
    public EventChannel eventChannel() {
        return channel;
    }

    /** Its queue pair, or null before {@link #createQueuePair}. */
    public QueuePair queuePair() {
        return queuePair;
    }

    /**
     * rdma_bind_addr(3): binds to a local address and port (port 0 picks one).
     *
     * @throws RdmaException EADDRINUSE when another id listens there, EADDRNOTAVAIL when no RDMA device has it
     */
    public void bind(InetSocketAddress address) {
        acquire();
        try {
            long sockaddr = Scratch.address();
            Mem.clear(sockaddr, Scratch.SIZE);
            SocketAddresses.write(address, sockaddr, "address");
            if (RdmaCma.rdma_bind_addr(id, sockaddr) != 0) {
                throw RdmaErrors.lastError("rdma_bind_addr", String.valueOf(address));
            }
        } finally {
            release();
        }
    }

    /**
     * rdma_listen(3): listens for connect requests, which arrive as CONNECT_REQUEST events with a new id.
     *
     * @param backlog pending connections, from 1 to 65535
     */
    public void listen(int backlog) {
        if (backlog < 1 || backlog > 65535) {
            throw new IllegalArgumentException("backlog must be from 1 to 65535, was " + backlog);
        }
        acquire();
        try {
            if (RdmaCma.rdma_listen(id, backlog) != 0) {
                throw RdmaErrors.lastError("rdma_listen", String.valueOf(localAddressUnlocked()));
            }
        } finally {
            release();
        }
    }

    /**
     * rdma_resolve_addr(3): starts resolving {@code destination} to an RDMA device; completes with ADDR_RESOLVED or
     * ADDR_ERROR on the event channel.
     *
     * @param source the local address to use, or null for the route's choice
     * @param timeout from 1 ms to Integer.MAX_VALUE ms
     */
    public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, Duration timeout) {
        int millis = positiveMillis(timeout);
        acquire();
        try {
            long src = Scratch.address();
            long dst = src + 32;
            Mem.clear(src, Scratch.SIZE);
            if (source != null) {
                SocketAddresses.write(source, src, "source");
            }
            SocketAddresses.write(destination, dst, "destination");
            if (RdmaCma.rdma_resolve_addr(id, source == null ? 0 : src, dst, millis) != 0) {
                throw RdmaErrors.lastError("rdma_resolve_addr", String.valueOf(destination));
            }
        } finally {
            release();
        }
    }

    /** rdma_resolve_route(3): completes with ROUTE_RESOLVED or ROUTE_ERROR. */
    public void resolveRoute(Duration timeout) {
        int millis = positiveMillis(timeout);
        acquire();
        try {
            if (RdmaCma.rdma_resolve_route(id, millis) != 0) {
                throw RdmaErrors.lastError("rdma_resolve_route", String.valueOf(peerAddressUnlocked()));
            }
        } finally {
            release();
        }
    }

    private static int positiveMillis(Duration timeout) {
        int millis = Fds.timeoutMillis(timeout, "timeout");
        if (millis < 1) {
            throw new IllegalArgumentException("timeout must be at least 1 ms, was " + timeout);
        }
        return millis;
    }

    /**
     * rdma_create_qp(3): a reliable-connected queue pair for this id (after ADDR_RESOLVED/ROUTE_RESOLVED, or on the
     * id of a CONNECT_REQUEST). The protection domain and queues must be of this id's device
     * ({@link #openDeviceContext()}). One queue pair per id: a second call, also a concurrent one, throws.
     *
     * @throws IllegalStateException when the id already has a queue pair, or another thread is creating one
     */
    public QueuePair createQueuePair(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                                     QueuePairCapabilities capabilities) {
        if (pd == null || sendCq == null || recvCq == null || capabilities == null) {
            throw new IllegalArgumentException("pd, sendCq, recvCq and capabilities must not be null");
        }
        if (portSpace != PortSpace.TCP) {
            throw new IllegalStateException("only ids in PortSpace.TCP get a reliable-connected queue pair");
        }
        acquire();
        boolean claimed = false;
        boolean created = false;
        try {
            // claimed, not just checked: two callers that both saw no queue pair would each create one, and
            // rdma_create_qp would overwrite id->qp with the second, leaking the first
            if (!queuePairClaimed.compareAndSet(false, true)) {
                throw new IllegalStateException("CmId already has a queue pair, or another thread is creating one");
            }
            claimed = true;
            long verbs = Mem.getLong(id + Layout.RDMA_CM_ID_VERBS);
            if (verbs == 0) {
                throw new IllegalStateException("CmId is not bound to a device yet: resolve an address, bind, or "
                    + "use the id of a CONNECT_REQUEST");
            }
            if (pd.context().address() != verbs || sendCq.context().address() != verbs
                || recvCq.context().address() != verbs) {
                throw new IllegalArgumentException("the protection domain and completion queues must belong to "
                    + "device " + DeviceContext.nameOf(verbs) + " of this id, opened with DeviceContext.open");
            }
            pd.acquire();
            sendCq.acquire();
            recvCq.acquire();
            try (Memory attr = Mem.allocate(Layout.SIZEOF_IBV_QP_INIT_ATTR)) {
                attr.setLong(Layout.IBV_QP_INIT_ATTR_SEND_CQ, sendCq.address());
                attr.setLong(Layout.IBV_QP_INIT_ATTR_RECV_CQ, recvCq.address());
                attr.setInt(Layout.IBV_QP_INIT_ATTR_CAP_MAX_SEND_WR, capabilities.maxSendWr());
                attr.setInt(Layout.IBV_QP_INIT_ATTR_CAP_MAX_RECV_WR, capabilities.maxRecvWr());
                attr.setInt(Layout.IBV_QP_INIT_ATTR_CAP_MAX_SEND_SGE, capabilities.maxSendSge());
                attr.setInt(Layout.IBV_QP_INIT_ATTR_CAP_MAX_RECV_SGE, capabilities.maxRecvSge());
                attr.setInt(Layout.IBV_QP_INIT_ATTR_CAP_MAX_INLINE_DATA, capabilities.maxInlineData());
                attr.setInt(Layout.IBV_QP_INIT_ATTR_QP_TYPE, Layout.IBV_QPT_RC);
                if (RdmaCma.rdma_create_qp(id, pd.address(), Mem.address(attr)) != 0) {
                    throw RdmaErrors.lastError("rdma_create_qp", capabilities.toString());
                }
                QueuePairCapabilities granted = new QueuePairCapabilities(
                    attr.getInt(Layout.IBV_QP_INIT_ATTR_CAP_MAX_SEND_WR),
                    attr.getInt(Layout.IBV_QP_INIT_ATTR_CAP_MAX_RECV_WR),
                    attr.getInt(Layout.IBV_QP_INIT_ATTR_CAP_MAX_SEND_SGE),
                    attr.getInt(Layout.IBV_QP_INIT_ATTR_CAP_MAX_RECV_SGE),
                    attr.getInt(Layout.IBV_QP_INIT_ATTR_CAP_MAX_INLINE_DATA));
                queuePair = new QueuePair(this, Mem.getLong(id + Layout.RDMA_CM_ID_QP), pd, sendCq, recvCq, granted);
                created = true;
                return queuePair;
            } finally {
                recvCq.release();
                sendCq.release();
                pd.release();
            }
        } finally {
            if (claimed && !created) {
                queuePairClaimed.set(false);
            }
            release();
        }
    }

    /**
     * rdma_set_option(3) {@code RDMA_OPTION_ID_ACK_TIMEOUT}: the queue pair's local ACK timeout, 4.096 us x
     * 2^{@code exponent}, after which a packet the peer has not acknowledged is sent again (up to the retry count).
     * Set before {@link #connect} or {@link #accept}; without it the RDMA CM chooses (on RoCE about half a second).
     *
     * @param exponent from 1 to 31
     */
    public void setAckTimeout(int exponent) {
        if (exponent < 1 || exponent > 31) {
            throw new IllegalArgumentException("the ACK timeout exponent must be from 1 to 31, was " + exponent);
        }
        acquire();
        try {
            long value = Scratch.address();
            Mem.putByte(value, (byte) exponent);
            if (RdmaCma.rdma_set_option(id, Layout.RDMA_OPTION_ID, Layout.RDMA_OPTION_ID_ACK_TIMEOUT, value, 1) != 0) {
                throw RdmaErrors.lastError("rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT)",
                    String.valueOf(peerAddressUnlocked()));
            }
        } finally {
            release();
        }
    }

    /** rdma_connect(3): completes with ESTABLISHED, REJECTED, UNREACHABLE or CONNECT_ERROR. */
    public void connect(ConnectionParameters parameters) {
        withConnParam("rdma_connect", parameters);
    }

    /** rdma_accept(3), on the id of a CONNECT_REQUEST (with its queue pair created). */
    public void accept(ConnectionParameters parameters) {
        withConnParam("rdma_accept", parameters);
    }

    private void withConnParam(String function, ConnectionParameters parameters) {
        if (parameters == null) {
            throw new IllegalArgumentException("parameters must not be null (use ConnectionParameters.defaults())");
        }
        acquire();
        try (Memory param = Mem.allocate(Layout.SIZEOF_RDMA_CONN_PARAM + ConnectionParameters.MAX_PRIVATE_DATA)) {
            byte[] data = parameters.privateData();
            long base = Mem.address(param);
            if (data.length > 0) {
                param.write(Layout.SIZEOF_RDMA_CONN_PARAM, data, 0, data.length);
                param.setLong(Layout.RDMA_CONN_PARAM_PRIVATE_DATA, base + Layout.SIZEOF_RDMA_CONN_PARAM);
            }
            param.setByte(Layout.RDMA_CONN_PARAM_PRIVATE_DATA_LEN, (byte) data.length);
            param.setByte(Layout.RDMA_CONN_PARAM_RESPONDER_RESOURCES, (byte) parameters.responderResources());
            param.setByte(Layout.RDMA_CONN_PARAM_INITIATOR_DEPTH, (byte) parameters.initiatorDepth());
            param.setByte(Layout.RDMA_CONN_PARAM_FLOW_CONTROL, (byte) parameters.flowControl());
            param.setByte(Layout.RDMA_CONN_PARAM_RETRY_COUNT, (byte) parameters.retryCount());
            param.setByte(Layout.RDMA_CONN_PARAM_RNR_RETRY_COUNT, (byte) parameters.rnrRetryCount());
            param.setByte(Layout.RDMA_CONN_PARAM_SRQ, (byte) parameters.srq());
            param.setInt(Layout.RDMA_CONN_PARAM_QP_NUM, parameters.qpNumber());
            int rc = function.equals("rdma_connect") ? RdmaCma.rdma_connect(id, base) : RdmaCma.rdma_accept(id, base);
            if (rc != 0) {
                throw RdmaErrors.lastError(function, String.valueOf(peerAddressUnlocked()));
            }
        } finally {
            release();
        }
    }

    static ConnectionParameters readConnParam(long param) {
        int length = Byte.toUnsignedInt(Mem.getByte(param + Layout.RDMA_CONN_PARAM_PRIVATE_DATA_LEN));
        long data = Mem.getLong(param + Layout.RDMA_CONN_PARAM_PRIVATE_DATA);
        byte[] bytes = new byte[data == 0 ? 0 : length];
        if (bytes.length > 0) {
            Mem.read(data, bytes, 0, bytes.length);
        }
        return new ConnectionParameters(bytes,
            Byte.toUnsignedInt(Mem.getByte(param + Layout.RDMA_CONN_PARAM_RESPONDER_RESOURCES)),
            Byte.toUnsignedInt(Mem.getByte(param + Layout.RDMA_CONN_PARAM_INITIATOR_DEPTH)),
            Mem.getByte(param + Layout.RDMA_CONN_PARAM_FLOW_CONTROL) & 1,
            Mem.getByte(param + Layout.RDMA_CONN_PARAM_RETRY_COUNT) & 7,
            Mem.getByte(param + Layout.RDMA_CONN_PARAM_RNR_RETRY_COUNT) & 7,
            Mem.getByte(param + Layout.RDMA_CONN_PARAM_SRQ) & 1,
            Mem.getInt(param + Layout.RDMA_CONN_PARAM_QP_NUM));
    }

    /**
     * rdma_reject(3), on the id of a CONNECT_REQUEST; the peer gets REJECTED with {@code privateData}.
     *
     * @param privateData at most {@link ConnectionParameters#MAX_PRIVATE_DATA} bytes, or null
     */
    public void reject(byte[] privateData) {
        byte[] data = privateData == null ? new byte[0] : privateData;
        if (data.length > ConnectionParameters.MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("privateData must be at most " + ConnectionParameters.MAX_PRIVATE_DATA
                + " bytes, was " + data.length);
        }
        acquire();
        try (Memory memory = Mem.allocate(Math.max(1, data.length))) {
            memory.write(0, data, 0, data.length);
            if (RdmaCma.rdma_reject(id, data.length == 0 ? 0 : Mem.address(memory), (byte) data.length) != 0) {
                throw RdmaErrors.lastError("rdma_reject", String.valueOf(peerAddressUnlocked()));
            }
        } finally {
            release();
        }
    }

    /**
     * rdma_disconnect(3). The peer gets DISCONNECTED and must answer with its own {@code disconnect()}; this side
     * gets DISCONNECTED when that answer arrives (or, without it, when the CM's request times out, status
     * -ETIMEDOUT, after a minute or more). So call it also on receiving DISCONNECTED, as rping does.
     */
    public void disconnect() {
        acquire();
        try {
            if (RdmaCma.rdma_disconnect(id) != 0) {
                throw RdmaErrors.lastError("rdma_disconnect", String.valueOf(peerAddressUnlocked()));
            }
        } finally {
            release();
        }
    }

    /**
     * rdma_migrate_id(3): moves this id, and the reporting of its future events, to another event channel.
     */
    public void migrate(EventChannel to) {
        if (to == null) {
            throw new IllegalArgumentException("to must not be null");
        }
        acquire();
        try {
            to.acquire();
            try {
                EventChannel from = channel;
                if (from == to) {
                    return;
                }
                if (RdmaCma.rdma_migrate_id(id, to.address()) != 0) {
                    throw RdmaErrors.lastError("rdma_migrate_id", null);
                }
                to.register(id, this);
                from.unregister(id, this);
                moveDependency(from, to);
                channel = to;
            } finally {
                to.release();
            }
        } finally {
            release();
        }
    }

    /** The local address (rdma_get_local_addr(3)); null before bind or resolve. */
    public InetSocketAddress localAddress() {
        acquire();
        try {
            return localAddressUnlocked();
        } finally {
            release();
        }
    }

    /** The peer's address (rdma_get_peer_addr(3)); null before resolve or a connect request. */
    public InetSocketAddress peerAddress() {
        acquire();
        try {
            return peerAddressUnlocked();
        } finally {
            release();
        }
    }

    private InetSocketAddress localAddressUnlocked() {
        return SocketAddresses.read(id + Layout.RDMA_CM_ID_ROUTE_ADDR_SRC_ADDR);
    }

    private InetSocketAddress peerAddressUnlocked() {
        return SocketAddresses.read(id + Layout.RDMA_CM_ID_ROUTE_ADDR_DST_ADDR);
    }

    /** The name of the device the id is bound to, or null while it is not bound to one. */
    public String deviceName() {
        acquire();
        try {
            long verbs = Mem.getLong(id + Layout.RDMA_CM_ID_VERBS);
            return verbs == 0 ? null : DeviceContext.nameOf(verbs);
        } finally {
            release();
        }
    }

    /** The port of the device the id is bound to (port_num), 0 while not bound. */
    public int portNumber() {
        acquire();
        try {
            return Byte.toUnsignedInt(Mem.getByte(id + Layout.RDMA_CM_ID_PORT_NUM));
        } finally {
            release();
        }
    }

    /** A {@link DeviceContext} view of the device this id is bound to, for its PD, CQs and memory regions. */
    public DeviceContext openDeviceContext() {
        String name = deviceName();
        if (name == null) {
            throw new IllegalStateException("CmId is not bound to a device yet");
        }
        return DeviceContext.open(name);
    }

    long address() {
        return id;
    }

    void queuePairClosed() {
        queuePair = null;
        queuePairClaimed.set(false);
    }

    @Override
    protected void destroy() {
        // forgotten first: once rdma_destroy_id returns, librdmacm may give the same address to a new connection
        // request's id, whose CONNECT_REQUEST must not find this closed object (seen under connect/close churn)
        channel.unregister(id, this);
        if (RdmaCma.rdma_destroy_id(id) != 0) {
            throw RdmaErrors.lastError("rdma_destroy_id", null);
        }
    }

    /** Its port space and addresses; reads them under the close guard, without waiting: "CmId[closed]" once closing. */
    @Override
    public String toString() {
        if (!tryAcquire()) {
            return "CmId[closed]";
        }
        try {
            return "CmId[" + portSpace + ", local " + localAddressUnlocked() + ", peer " + peerAddressUnlocked() + "]";
        } finally {
            release();
        }
    }
}
