package org.rdmaconnector.connector;

/**
 * What a peer may do to a registered memory region with its rkey ({@code IBV_ACCESS_REMOTE_READ},
 * {@code IBV_ACCESS_REMOTE_WRITE}, ibv_reg_mr(3)). A region has none unless it is registered with them.
 */
public enum RemoteAccess {
    /** Peers may RDMA READ the region. */
    READ,
    /** Peers may RDMA WRITE into the region (with or without immediate data). */
    WRITE
}
