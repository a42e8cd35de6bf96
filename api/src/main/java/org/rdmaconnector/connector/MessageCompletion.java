package org.rdmaconnector.connector;

import org.osgi.annotation.versioning.ProviderType;

/**
 * A work completion of a listener's connection: a message received (with its bytes), the peer's RDMA WRITE with
 * immediate data (a receive with opcode {@link WcOpcode#RECV_RDMA_WITH_IMM}, its
 * {@link WorkCompletion#immediateData()}, and no bytes), or one of the connection's own sends, RDMA writes or reads
 * completed.
 */
@ProviderType
public interface MessageCompletion {
    /** The connection it belongs to. */
    InboundConnection connection();

    /** The work completion as polled from the completion queue. */
    WorkCompletion workCompletion();

    /** Whether this completes a receive: a message, or the peer's RDMA WRITE with immediate data. */
    boolean isReceive();

    /** Whether the work request succeeded. */
    default boolean isSuccess() {
        return workCompletion().isSuccess();
    }

    /** A copy of the bytes received (empty for a send, write or read, an RDMA WRITE with immediate, or a failure). */
    byte[] data();

    /** Counts the connection's completions of this kind from 1, in delivery order. */
    long sequence();
}
