package org.rdmaconnector.connector.spi;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.verbs.CompletionChannel;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.DeviceAttributes;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.MemoryRegion;
import org.rdmaconnector.verbs.PortAttributes;

/**
 * The application's {@link RdmaConnection} on a {@link ChannelSet}: remembers the endpoints and regions made through
 * it and closes them when it closes, then tells its pool ({@code onClose}). {@link #invalidate()} is the pool's way to
 * take the set away (cleanup, destroy): afterwards every method throws {@link IllegalStateException}.
 */
public final class ConnectionHandle implements RdmaConnection {
    private volatile Consumer<ConnectionHandle> onClose;
    private final Set<RdmaEndpoint> endpoints = ConcurrentHashMap.newKeySet();
    private final Set<MemoryRegion> regions = ConcurrentHashMap.newKeySet();
    private volatile ChannelSet set;

    /** A handle on {@code set}; {@code onClose} runs once when the application closes it. */
    public ConnectionHandle(ChannelSet set, Consumer<ConnectionHandle> onClose) {
        this.set = set;
        this.onClose = onClose;
    }

    private ChannelSet set() {
        ChannelSet s = set;
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
        return set;
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
        MemoryRegion region = set().register(buffer);
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
    public EventChannel eventChannel() {
        return set().eventChannel();
    }

    @Override
    public CompletionChannel completionChannel() {
        return set().completionChannel();
    }

    @Override
    public CompletionQueue completionQueue() {
        return set().completionQueue();
    }

    @Override
    public boolean isClosed() {
        return set == null;
    }

    /** Takes the set away without telling the pool; what was made through this handle is closed. */
    public void invalidate() {
        ChannelSet s = take();
        if (s != null) {
            release(s);
        }
    }

    /** Takes the set away from this handle (once): afterwards it is closed. */
    private synchronized ChannelSet take() {
        ChannelSet s = set;
        set = null;
        return s;
    }

    private void release(ChannelSet s) {
        for (RdmaEndpoint endpoint : List.copyOf(endpoints)) {
            endpoint.close();
        }
        endpoints.clear();
        for (MemoryRegion region : List.copyOf(regions)) {
            s.deregister(region);
        }
        regions.clear();
    }

    @Override
    public void close() {
        ChannelSet s = take();
        if (s != null) {
            release(s);
            onClose.accept(this);
        }
    }

    @Override
    public String toString() {
        ChannelSet s = set;
        return "RdmaConnection[" + (s == null ? "closed" : s.toString()) + "]";
    }
}
