package org.rdmaconnector.connector;

import org.osgi.annotation.versioning.ProviderType;

/**
 * A work completion of a listener's connection: a message received (with its bytes), the peer's RDMA WRITE with
 * immediate data (a receive with opcode {@link WcOpcode#RECV_RDMA_WITH_IMM}, its
 * {@link WorkCompletion#immediateData()}, and no bytes), or one of the connection's own sends, RDMA writes or reads
 * completed. Its delivery lasts until every endpoint it was given to has returned from it (or, for an endpoint that
 * paused, until its held completion was delivered or given up): the receive is posted again only then.
 *
 * <p>It is a view, valid during its delivery only: the bytes are read where the device put them and the work
 * completion where the connector polled it, and both are reused for a later message once the delivery is through.
 * From then on every method throws {@link IllegalStateException}. A listener that keeps anything of it (or hands it
 * to another thread) takes it before it returns: {@link #data()} or {@link #copyData}, {@link #workCompletion()},
 * {@link #connection()}, {@link #sequence()}. So a delivery allocates almost nothing, and a listener that copies
 * each message into an array of its own allocates nothing for it.
 */
@ProviderType
public interface MessageCompletion {
    /**
     * The connection it belongs to.
     *
     * @throws IllegalStateException after the delivery (this holds for every method)
     */
    InboundConnection connection();

    /** The work completion as polled from the completion queue: a copy, made when first asked for, to keep. */
    WorkCompletion workCompletion();

    /** Whether this completes a receive: a message, or the peer's RDMA WRITE with immediate data. */
    boolean isReceive();

    /** Whether the work request succeeded. */
    default boolean isSuccess() {
        return workCompletion().isSuccess();
    }

    /**
     * A copy of the bytes received (empty for a send, write or read, an RDMA WRITE with immediate, or a failure), new
     * at each call.
     */
    byte[] data();

    /** How many bytes were received: the length of {@link #data()}, without its copy. */
    int dataLength();

    /**
     * Copies the bytes received into {@code destination} at {@code offset}, as {@link #data()} would give them, but
     * into an array of the caller's, from where the device put them: a listener that reuses one array allocates
     * nothing per message.
     *
     * @return how many bytes were copied ({@link #dataLength()})
     * @throws IllegalArgumentException when {@code destination} is null
     * @throws IndexOutOfBoundsException when they do not fit at {@code offset}
     */
    int copyData(byte[] destination, int offset);

    /** Counts the connection's completions of this kind from 1, in delivery order. */
    long sequence();
}
