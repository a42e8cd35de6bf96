package org.rdmaconnector.connector.spi;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Set;
import org.rdmaconnector.connector.MemoryRegion;
import org.rdmaconnector.connector.RemoteAccess;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.verbs.PolledCompletion;

/**
 * What an {@link AcceptedConnection} does to its CM id and queue pair: the narrow seam between the connection's state
 * machine and rdma-core ({@link CmWire} in production, a recording stand-in in host tests). Calls come from the
 * state machine only, never while it holds its lock.
 */
interface ConnectionWire {
    /** The peer's address (known from the CONNECT_REQUEST). */
    InetSocketAddress peerAddress();

    /** The local address the request came in on. */
    InetSocketAddress localAddress();

    /**
     * Creates the queue pair and its registered send and receive slots, and posts every receive: done only once the
     * request is to be accepted. Completions of the queue pair go to {@code route}: {@code polled} (which calls
     * {@link #complete}) on the event loop, then {@code delivered} in order.
     */
    void allocate(DeviceQueueSet.QueuePairRoute route);

    /** rdma_accept(3). */
    void accept();

    /** rdma_reject(3) with {@code privateData} (at most 148 bytes). */
    void reject(byte[] privateData);

    /** rdma_disconnect(3), at most once (our own DREQ, or the DREP answering the peer's). */
    void disconnect();

    /** Sends the {@code length} bytes at {@code offset} of {@code message} from a staged send slot, signaled or not. */
    WorkRequest send(byte[] message, int offset, int length, boolean signaled);

    /** Registers {@code buffer} with the queue pair's protection domain; deregistered by {@link #destroy()}. */
    MemoryRegion register(ByteBuffer buffer, Set<RemoteAccess> remoteAccess);

    /** Posts a checked RDMA WRITE or READ whose local region was {@link #register}ed through this wire. */
    WorkRequest post(RdmaOperation operation);

    /**
     * Posts a staged receive again once {@code receive}'s delivery is through: into its own slot when its message was
     * left there ({@link #complete}), else into a free one.
     */
    void repostReceive(WorkRequest receive);

    /** Frees the slot of {@code receive}'s message without posting it (the connection is ending); else nothing. */
    void releaseReceive(WorkRequest receive);

    /**
     * Copies {@code length} bytes of the message {@code receive} left in its slot to {@code destination} at
     * {@code offset}: only until {@link #repostReceive} or {@link #releaseReceive}.
     *
     * @throws IllegalStateException when the slot is no longer {@code receive}'s
     */
    void readReceived(WorkRequest receive, byte[] destination, int offset, int length);

    /**
     * Completes the request of {@code completion}; null when it was completed already (flushed by a destroy). A
     * staged receive that holds a message leaves its bytes in its slot, for {@link #readReceived}.
     */
    PostedRequest complete(PolledCompletion completion);

    /** Requests posted and not completed. */
    int outstanding();

    /** Destroys the id, the queue pair and the slots' registered memory, now. Twice is a no-op. */
    void destroy();
}
