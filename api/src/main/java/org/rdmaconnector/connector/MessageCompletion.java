package org.rdmaconnector.connector;


/** A work completion of a listener's connection: a message received (with its bytes) or a send completed. */
public interface MessageCompletion {
    /** The connection it belongs to. */
    InboundConnection connection();

    /** The work completion as polled from the completion queue. */
    WorkCompletion workCompletion();

    /** Whether this is a received message (else a send completion). */
    boolean isReceive();

    /** Whether the work request succeeded. */
    default boolean isSuccess() {
        return workCompletion().isSuccess();
    }

    /** A copy of the bytes received (empty for a send or a failed receive). */
    byte[] data();

    /** Counts the connection's completions of this kind from 1, in delivery order. */
    long sequence();
}
