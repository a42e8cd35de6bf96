package org.rdmaconnector.connector;

import org.osgi.annotation.versioning.ProviderType;

/**
 * A work completion of a listener's connection: a message received (with its bytes), the peer's RDMA WRITE with
 * immediate data (a receive with opcode {@link WcOpcode#RECV_RDMA_WITH_IMM}, its
 * {@link WorkCompletion#immediateData()}, and no bytes), or one of the connection's own sends, RDMA writes or reads
 * completed. Its delivery lasts until every endpoint it was given to has returned from it (or, for an endpoint that
 * paused, until its held completion was delivered or given up): the receive is posted again only then. A listener
 * that hands the completion to another thread should take what it needs of the bytes before it returns.
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

    /**
     * A copy of the bytes received (empty for a send, write or read, an RDMA WRITE with immediate, or a failure), new
     * at each call. It can be asked for during the delivery and after it, unless the bytes were taken with
     * {@link #copyData} during the delivery.
     *
     * @throws IllegalStateException after the delivery, when the bytes were taken with {@link #copyData} during it
     */
    byte[] data();

    /** How many bytes were received: the length of {@link #data()}, without its copy. */
    int dataLength();

    /**
     * Copies the bytes received into {@code destination} at {@code offset}, as {@link #data()} would give them, but
     * into an array of the caller's. During the delivery the bytes are read where the device put them, and this
     * takes them, for every endpoint the completion is given to: unless one of them called {@link #data()} during the
     * delivery, the completion keeps no copy of them after it, and a listener that reuses one array allocates nothing
     * per message. Called after the delivery, it copies the completion's own copy.
     *
     * @return how many bytes were copied ({@link #dataLength()})
     * @throws IllegalArgumentException when {@code destination} is null
     * @throws IndexOutOfBoundsException when they do not fit at {@code offset}
     * @throws IllegalStateException after the delivery, when the bytes were taken during it
     */
    int copyData(byte[] destination, int offset);

    /** Counts the connection's completions of this kind from 1, in delivery order. */
    long sequence();
}
