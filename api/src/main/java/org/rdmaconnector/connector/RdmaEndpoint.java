package org.rdmaconnector.connector;

import java.net.InetSocketAddress;
import org.osgi.annotation.versioning.ProviderType;

/**
 * One end of an established reliable connection, made by {@link RdmaConnection#connect}. Each posted send, receive,
 * RDMA write or read ({@link RemoteMemoryAccess}) returns a {@link WorkRequest} whose
 * {@link WorkRequest#completion() Completion} completes with its work completion. A request that fails (any status
 * but a flush) ends the connection: the endpoint disconnects and what is still posted completes as flushed.
 * Thread-safe.
 */
@ProviderType
public interface RdmaEndpoint extends RemoteMemoryAccess, AutoCloseable {
    /** Bytes one {@link #send(byte[])} or {@link #receive()} can carry through the endpoint's own buffers. */
    int MAX_STAGED_MESSAGE = 4096;

    /** This end's address. */
    InetSocketAddress localAddress();

    /** The peer's address. */
    InetSocketAddress peerAddress();

    /** Whether the connection is established and not disconnected by either side. */
    boolean isConnected();

    /** Posts a signaled send of {@code length} bytes at {@code offset} of {@code region} (ibv_post_send(3)). */
    default WorkRequest send(MemoryRegion region, int offset, int length) {
        return send(region, offset, length, true);
    }

    /**
     * Posts a send of {@code length} bytes at {@code offset} of {@code region}, signaled or not: an unsignaled one
     * completes with the next signaled request (see {@link RemoteMemoryAccess}, selective signaling).
     */
    WorkRequest send(MemoryRegion region, int offset, int length, boolean signaled);

    /**
     * Copies {@code message} (at most {@value #MAX_STAGED_MESSAGE} bytes) into one of the endpoint's registered send
     * slots and posts it, signaled. There are as many slots as the queue pair's send depth.
     *
     * @throws IllegalStateException when every slot is still in flight (wait for earlier sends first)
     */
    default WorkRequest send(byte[] message) {
        return send(message, true);
    }

    /**
     * As {@link #send(byte[])}, signaled or not (see {@link RemoteMemoryAccess}, selective signaling). An unsignaled
     * send keeps its slot until a later signaled request completes; a send that leaves fewer than three quarters of
     * the slots free is signaled anyway.
     *
     * @throws IllegalStateException when every slot is still in flight
     */
    default WorkRequest send(byte[] message, boolean signaled) {
        return send(message, 0, message == null ? 0 : message.length, signaled);
    }

    /**
     * As {@link #send(byte[], boolean)}, the {@code length} bytes at {@code offset} of {@code message}: a sender that
     * reuses one array sends without a copy of its own. The bytes are copied into the slot before this returns, so
     * the array may be reused at once.
     *
     * @throws IllegalArgumentException when {@code message} is null, or {@code length} is more than
     *     {@value #MAX_STAGED_MESSAGE} bytes
     * @throws IndexOutOfBoundsException when the bytes are not inside {@code message}
     * @throws IllegalStateException when every slot is still in flight
     */
    WorkRequest send(byte[] message, int offset, int length, boolean signaled);

    /** Posts a receive into {@code length} bytes at {@code offset} of {@code region} (ibv_post_recv(3)). */
    WorkRequest receive(MemoryRegion region, int offset, int length);

    /**
     * Posts a receive into one of the endpoint's own slots ({@value #MAX_STAGED_MESSAGE} bytes); the bytes received
     * are in {@link WorkRequest#data()} once it completes (none when the peer's RDMA WRITE with immediate data took
     * it: then its {@link WorkCompletion#immediateData()}).
     */
    WorkRequest receive();

    /**
     * Disconnects (the DREQ/DREP handshake, waited for a bounded time), completes what is still posted as flushed,
     * and frees the queue pair and CM id. Twice is a no-op.
     */
    @Override
    void close();
}
