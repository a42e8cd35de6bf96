package org.rdmaconnector.connector;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Set;
import org.osgi.annotation.versioning.ProviderType;

/**
 * An application's handle on a pooled set of RDMA channels: a CM event channel, a completion channel with its
 * completion queue, and a protection domain, on one device and port. The pool (the application server's, or the
 * OSGi factory's) opens such sets once and lends them out; {@link #close()} gives the set back, after the endpoints
 * and memory regions made through this handle are closed. A closed handle throws {@link IllegalStateException}.
 *
 * <p>The connector reads the channels itself (CM events answer {@link #connect}, completions complete
 * {@link WorkRequest}s); {@link #channels()} shows figures of them, never the channels.
 */
@ProviderType
public interface RdmaConnection extends AutoCloseable {
    /**
     * Connects to a listener (an RDMA CM id listening on {@code remote}): resolves the address and route, creates a
     * reliable-connected queue pair on this set's queue and protection domain, connects, and returns when the
     * connection is ESTABLISHED.
     *
     * @throws org.rdmaconnector.connector.RdmaException when the peer rejects, is unreachable, or {@code timeout} passes
     *     (ETIMEDOUT), naming the step and the address
     */
    RdmaEndpoint connect(InetSocketAddress remote, Duration timeout);

    /**
     * Registers {@code buffer} (direct) with this set's protection domain for local access, counted against the
     * configured memory registration limit. The region is deregistered when this handle closes.
     *
     * @throws IllegalArgumentException if the buffer is not direct or the limit would be passed
     */
    MemoryRegion register(ByteBuffer buffer);

    /**
     * Registers {@code buffer} (direct) as {@link #register(ByteBuffer)} does, and lets peers access it as
     * {@code remoteAccess} says (RDMA READ, WRITE: ibv_reg_mr(3) with {@code IBV_ACCESS_REMOTE_READ},
     * {@code IBV_ACCESS_REMOTE_WRITE}); hand it over as its {@link MemoryRegion#remoteRegion()}. An empty set is
     * local access only. Peers lose access when the region is closed.
     *
     * @throws IllegalArgumentException if the buffer is not direct, {@code remoteAccess} is null or the limit would be
     *     passed
     */
    MemoryRegion register(ByteBuffer buffer, Set<RemoteAccess> remoteAccess);

    /** The device name, e.g. {@code mlx5_0} or {@code rxe0}. */
    String deviceName();

    /** The port number (from 1) this set is configured for. */
    int portNumber();

    /** ibv_query_device(3) of the device. */
    DeviceAttributes queryDevice();

    /** ibv_query_port(3) of the configured port. */
    PortAttributes queryPort();

    /** Figures of this handle's channel set (fds, the completion queue's size, counters); never the channels. */
    ChannelSetInfo channels();

    /** Whether this handle is closed. */
    boolean isClosed();

    /** Closes the endpoints and memory regions made through this handle and gives the set back. Twice is a no-op. */
    @Override
    void close();
}
