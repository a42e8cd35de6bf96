package org.rdmaconnector.connector;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The one-sided operations of a reliable connection on a peer's registered memory ({@link RemoteRegion}, handed
 * over by the peer): RDMA WRITE, RDMA WRITE with immediate data and RDMA READ (ibv_post_send(3)). Each returns a
 * {@link WorkRequest} of its own; {@code local} is a region registered through the same connection (or connection
 * handle), named by offset and length. What the connector can know is checked before posting (ranges, the access
 * the peer's region was registered with); what only the peer knows fails as the request's work completion, e.g.
 * status {@code IBV_WC_REM_ACCESS_ERR} for a closed region or a forged rkey, and a failed request ends its
 * connection.
 *
 * <p><b>Selective signaling.</b> A request is signaled unless {@code signaled} is false. An unsignaled one makes no
 * work completion when it succeeds: its {@link WorkRequest} completes, successfully, when a later signaled request
 * of the same connection completes (a reliable connection completes its send queue in order), so post a signaled
 * one after a run of unsignaled ones and wait for that. A failed unsignaled request completes with its own status,
 * and one still posted when the connection closes completes as flushed. The device frees an unsignaled request's
 * place in the send queue only when a later completion arrives, so the connector signals a request anyway when the
 * send queue's depth less one went unsignaled in a row. An accepted connection's unsignaled requests reach no
 * {@link CompletionListener}. Fewer completions mean fewer wake-ups: a window of writes signaled one in 16 costs
 * one completion instead of 16.
 */
@ProviderType
public interface RemoteMemoryAccess {
    /**
     * RDMA WRITE: {@code length} bytes at {@code offset} of {@code local} to {@code remoteOffset} of {@code remote}.
     * The peer is not told (no receive is consumed, no completion arrives there).
     *
     * @throws IllegalArgumentException when a range lies outside its region, {@code remote} does not allow
     *     {@link RemoteAccess#WRITE}, or {@code local} is not registered through this connection
     */
    default WorkRequest write(MemoryRegion local, int offset, int length, RemoteRegion remote, int remoteOffset) {
        return write(local, offset, length, remote, remoteOffset, true);
    }

    /**
     * As {@link #write(MemoryRegion, int, int, RemoteRegion, int)}, signaled or not (selective signaling, above).
     *
     * @throws IllegalArgumentException as for {@link #write(MemoryRegion, int, int, RemoteRegion, int)}
     */
    WorkRequest write(MemoryRegion local, int offset, int length, RemoteRegion remote, int remoteOffset,
                      boolean signaled);

    /**
     * RDMA WRITE with immediate data: as {@link #write(MemoryRegion, int, int, RemoteRegion, int)}, then the peer's
     * next posted receive completes with opcode {@link WcOpcode#RECV_RDMA_WITH_IMM} and {@code immediateData} (a
     * listener delivers it to its {@link CompletionListener}s). The peer must have a receive posted. {@code length}
     * may be 0 (a notification).
     *
     * @throws IllegalArgumentException as for {@link #write(MemoryRegion, int, int, RemoteRegion, int)}
     */
    default WorkRequest writeWithImmediate(MemoryRegion local, int offset, int length, RemoteRegion remote,
                                           int remoteOffset, int immediateData) {
        return writeWithImmediate(local, offset, length, remote, remoteOffset, immediateData, true);
    }

    /**
     * As {@link #writeWithImmediate(MemoryRegion, int, int, RemoteRegion, int, int)}, signaled or not (selective
     * signaling, above). The peer's receive completes either way.
     *
     * @throws IllegalArgumentException as for {@link #write(MemoryRegion, int, int, RemoteRegion, int)}
     */
    WorkRequest writeWithImmediate(MemoryRegion local, int offset, int length, RemoteRegion remote, int remoteOffset,
                                   int immediateData, boolean signaled);

    /**
     * RDMA READ: {@code length} bytes at {@code remoteOffset} of {@code remote} into {@code offset} of {@code local};
     * they are there once the request completes successfully.
     *
     * @throws IllegalArgumentException when a range lies outside its region, {@code remote} does not allow
     *     {@link RemoteAccess#READ}, or {@code local} is not registered through this connection
     */
    default WorkRequest read(MemoryRegion local, int offset, int length, RemoteRegion remote, int remoteOffset) {
        return read(local, offset, length, remote, remoteOffset, true);
    }

    /**
     * As {@link #read(MemoryRegion, int, int, RemoteRegion, int)}, signaled or not (selective signaling, above): the
     * bytes of an unsignaled READ are in place once its request completes.
     *
     * @throws IllegalArgumentException as for {@link #read(MemoryRegion, int, int, RemoteRegion, int)}
     */
    WorkRequest read(MemoryRegion local, int offset, int length, RemoteRegion remote, int remoteOffset,
                     boolean signaled);
}
