package org.rdmaconnector.connector;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Set;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A connection a listener accepted, as its listeners see it: it sends messages, and RDMA writes and reads
 * ({@link RemoteMemoryAccess}) from memory registered through it. The completions of its own requests also reach
 * the CompletionListeners; a request that fails (any status but a flush) ends the connection. Thread-safe.
 */
@ProviderType
public interface InboundConnection extends RemoteMemoryAccess {
    /** A number unique among the listener's connections, for logs and correlation. */
    long number();

    /** The peer's address. */
    InetSocketAddress peerAddress();

    /** The local (listening) address. */
    InetSocketAddress localAddress();

    /** Whether the connection is established and not yet disconnected. */
    boolean isConnected();

    /**
     * Sends {@code message} (at most the listener's receive buffer size) from one of the connection's registered
     * send slots, signaled; its completion also reaches the CompletionListeners.
     *
     * @throws IllegalStateException when the connection is not established or every send slot is in flight
     */
    default WorkRequest send(byte[] message) {
        return send(message, true);
    }

    /**
     * As {@link #send(byte[])}, signaled or not (see {@link RemoteMemoryAccess}, selective signaling): an unsignaled
     * send reaches no CompletionListener, and keeps its slot until a later signaled request completes; a send that
     * leaves fewer than three quarters of the slots free is signaled anyway. An echo that sends unsignaled costs one
     * delivery per message instead of two.
     *
     * @throws IllegalStateException when the connection is not established or every send slot is in flight
     */
    default WorkRequest send(byte[] message, boolean signaled) {
        return send(message, 0, message == null ? 0 : message.length, signaled);
    }

    /**
     * As {@link #send(byte[], boolean)}, the {@code length} bytes at {@code offset} of {@code message}: with
     * {@link MessageCompletion#copyData(byte[], int)}, a listener echoes from an array of its own, allocating nothing.
     * The bytes are copied into a send slot before this returns, so the array may be reused at once.
     *
     * @throws IllegalArgumentException when {@code message} is null, or {@code length} is more than the listener's
     *     receive buffer size
     * @throws IndexOutOfBoundsException when the bytes are not inside {@code message}
     * @throws IllegalStateException when the connection is not established or every send slot is in flight
     */
    WorkRequest send(byte[] message, int offset, int length, boolean signaled);

    /**
     * Registers {@code buffer} (direct) with the protection domain of this connection's queue pair, for its RDMA
     * writes and reads and, as {@code remoteAccess} says, for the peer's (an empty set: local access only). The region
     * is deregistered when the connection is destroyed, or when it is closed first.
     *
     * @throws IllegalArgumentException if the buffer is not direct or {@code remoteAccess} is null
     * @throws IllegalStateException when the connection is not established
     */
    MemoryRegion register(ByteBuffer buffer, Set<RemoteAccess> remoteAccess);

    /** Starts the disconnect handshake; DISCONNECTED follows. Twice is a no-op. */
    void disconnect();
}
