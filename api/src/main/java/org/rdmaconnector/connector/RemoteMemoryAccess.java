package org.rdmaconnector.connector;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The one-sided operations of a reliable connection on a peer's registered memory ({@link RemoteRegion}, handed
 * over by the peer): RDMA WRITE, RDMA WRITE with immediate data and RDMA READ (ibv_post_send(3)). Each returns a
 * signaled {@link WorkRequest} of its own; {@code local} is a region registered through the same connection (or
 * connection handle), named by offset and length. What the connector can know is checked before posting (ranges,
 * the access the peer's region was registered with); what only the peer knows fails as the request's work
 * completion, e.g. status {@code IBV_WC_REM_ACCESS_ERR} for a closed region or a forged rkey, and a failed request
 * ends its connection.
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
    WorkRequest write(MemoryRegion local, int offset, int length, RemoteRegion remote, int remoteOffset);

    /**
     * RDMA WRITE with immediate data: as {@link #write}, then the peer's next posted receive completes with opcode
     * {@link WcOpcode#RECV_RDMA_WITH_IMM} and {@code immediateData} (a listener delivers it to its
     * {@link CompletionListener}s). The peer must have a receive posted. {@code length} may be 0 (a notification).
     *
     * @throws IllegalArgumentException as for {@link #write}
     */
    WorkRequest writeWithImmediate(MemoryRegion local, int offset, int length, RemoteRegion remote, int remoteOffset,
                                   int immediateData);

    /**
     * RDMA READ: {@code length} bytes at {@code remoteOffset} of {@code remote} into {@code offset} of {@code local};
     * they are there once the request completes successfully.
     *
     * @throws IllegalArgumentException when a range lies outside its region, {@code remote} does not allow
     *     {@link RemoteAccess#READ}, or {@code local} is not registered through this connection
     */
    WorkRequest read(MemoryRegion local, int offset, int length, RemoteRegion remote, int remoteOffset);
}
