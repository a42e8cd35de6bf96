package org.rdmaconnector.connector.spi;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.rdmaconnector.connector.ChannelSetInfo;
import org.rdmaconnector.connector.DeviceAttributes;
import org.rdmaconnector.connector.PortAttributes;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.RemoteAccess;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.MemoryRegion;

/**
 * The application's {@link RdmaConnection} on a {@link ChannelSet}: remembers the endpoints and regions made through
 * it and closes them when it closes, then tells its pool ({@code onClose}). {@link #invalidate()} is the pool's way to
 * take the set away (cleanup, destroy): afterwards every method throws {@link IllegalStateException}. Closing gives
 * the set back even when freeing something fails (a failing rdma_destroy_id or ibv_dereg_mr): then the set is
 * {@link Target#discard discarded}, so its pool destroys it, and the failure is thrown after that.
 */
public final class ConnectionHandle implements RdmaConnection {
    /** What a handle uses of its set: a {@link ChannelSet}; a stand-in in host tests. */
    interface Target {
        RdmaEndpoint connect(InetSocketAddress remote, Duration timeout);

        MemoryRegion register(ByteBuffer buffer, Set<RemoteAccess> remoteAccess);

        void deregister(MemoryRegion region);

        String deviceName();

        ChannelSettings settings();

        DeviceContext context();

        ChannelSetInfo info();

        /** Not to be lent again: something made through it could not be freed ({@code cause}). */
        void discard(Throwable cause);
    }

    private volatile Consumer<ConnectionHandle> onClose;
    private final Set<RdmaEndpoint> endpoints = ConcurrentHashMap.newKeySet();
    private final Set<MemoryRegion> regions = ConcurrentHashMap.newKeySet();
    private volatile Target set;

    /** A handle on {@code set}; {@code onClose} runs once when the application closes it. */
    public ConnectionHandle(ChannelSet set, Consumer<ConnectionHandle> onClose) {
        this((Target) set, onClose);
    }

    ConnectionHandle(Target set, Consumer<ConnectionHandle> onClose) {
        this.set = set;
        this.onClose = onClose;
    }

    private Target set() {
        Target s = set;
        if (s == null) {
            throw new IllegalStateException("this RdmaConnection is closed");
        }
        return s;
    }

    /**
     * Moves this handle to another set and pool (JCA associateConnection); only while it has no endpoint open and
     * no memory registered.
     *
     * @throws IllegalStateException if it is closed, has an endpoint open or memory registered
     */
    public synchronized void moveTo(ChannelSet other, Consumer<ConnectionHandle> newOnClose) {
        set();
        if (endpoints.stream().anyMatch(RdmaEndpoint::isConnected) || !regions.isEmpty()) {
            throw new IllegalStateException("an RdmaConnection with open endpoints or registered memory cannot move "
                + "to another set");
        }
        endpoints.clear();
        set = other;
        onClose = newOnClose;
    }

    /** The set this handle uses now, or null once closed. */
    public ChannelSet channelSet() {
        return set instanceof ChannelSet s ? s : null;
    }

    @Override
    public RdmaEndpoint connect(InetSocketAddress remote, Duration timeout) {
        RdmaEndpoint endpoint = set().connect(remote, timeout);
        endpoints.removeIf(e -> !e.isConnected());
        endpoints.add(endpoint);
        return endpoint;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer) {
        return register(buffer, Set.of());
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<RemoteAccess> remoteAccess) {
        MemoryRegion region = set().register(buffer, remoteAccess);
        regions.add(region);
        return region;
    }

    @Override
    public String deviceName() {
        return set().deviceName();
    }

    @Override
    public int portNumber() {
        return set().settings().portNumber();
    }

    @Override
    public DeviceAttributes queryDevice() {
        return set().context().query();
    }

    @Override
    public PortAttributes queryPort() {
        return set().context().queryPort(portNumber());
    }

    @Override
    public ChannelSetInfo channels() {
        return set().info();
    }

    @Override
    public boolean isClosed() {
        return set == null;
    }

    /**
     * Takes the set away without telling the pool; what was made through this handle is closed. When freeing
     * something fails, the set is discarded and the first failure thrown.
     */
    public void invalidate() {
        Target s = take();
        if (s != null) {
            RuntimeException failure = release(s);
            if (failure != null) {
                throw failure;
            }
        }
    }

    /** Takes the set away from this handle (once): afterwards it is closed. */
    private synchronized Target take() {
        Target s = set;
        set = null;
        return s;
    }

    /**
     * Closes every endpoint and region made through this handle, each even when another one fails; if any failed,
     * discards the set and returns the first failure (the others suppressed in it).
     */
    private RuntimeException release(Target s) {
        AutoCloseableStack made = new AutoCloseableStack(); // newest first: the endpoints, then the regions
        for (MemoryRegion region : List.copyOf(regions)) {
            made.push(() -> s.deregister(region));
        }
        for (RdmaEndpoint endpoint : List.copyOf(endpoints)) {
            made.push(endpoint::close);
        }
        endpoints.clear();
        regions.clear();
        try {
            made.closeAll(null);
            return null;
        } catch (RuntimeException e) {
            s.discard(e);
            return e;
        }
    }

    /**
     * Closes what was made through this handle and gives the set back to its pool, also when freeing something
     * failed (the set is then discarded, and that failure is thrown once the set is back). Twice is a no-op.
     */
    @Override
    public void close() {
        Target s = take();
        if (s == null) {
            return;
        }
        RuntimeException failure;
        try {
            failure = release(s);
        } finally {
            onClose.accept(this); // the pool's slot comes back whatever happened above
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        Target s = set;
        return "RdmaConnection[" + (s == null ? "closed" : s.toString()) + "]";
    }
}
