package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.rdmaconnector.connector.ChannelSetInfo;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.RemoteAccess;
import org.rdmaconnector.connector.RemoteRegion;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.verbs.Access;
import org.rdmaconnector.verbs.AsyncEvent;
import org.rdmaconnector.verbs.AsyncEventType;
import org.rdmaconnector.verbs.CmEvent;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.ConnectionParameters;
import org.rdmaconnector.verbs.Device;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.MemoryRegion;
import org.rdmaconnector.verbs.PolledCompletion;
import org.rdmaconnector.verbs.PortSpace;
import org.rdmaconnector.verbs.QueuePairCapabilities;
import org.rdmaconnector.verbs.RdmaErrors;
import org.rdmaconnector.verbs.engine.EventEngine;
import org.rdmaconnector.verbs.engine.Registration;
import org.rdmaconnector.verbs.engine.Sources;
import org.rdmaconnector.verbs.jna.Layout;

/**
 * The pooled set behind a connection handle: a lease on the shared device context, and its own protection domain,
 * CM event channel, completion channel and completion queue, whose events the engine reads. Opening these is the
 * cost pooling saves. {@link #cleanup()} closes what users made (endpoints, memory regions) and keeps the channels;
 * {@link #close()} frees everything. Fatal async events of its device and port go to {@link #onFatalEvent}.
 *
 * <p>Its {@link State}: {@code OPEN}, then {@code DEVICE_REMOVED} when a CM id of the set reports
 * {@code DEVICE_REMOVAL} (every posted request of every endpoint ends with the removal's error, later posts, connects
 * and registrations throw it, the set is never lent again), then {@code CLOSED}. Closing frees each endpoint's
 * queue pair, staging region and id, then the user's regions, the CM channel, and the CQ, its channel, the PD and the
 * device lease: what the kernel waits for before it finishes the removal.
 */
public final class ChannelSet implements ConnectionHandle.Target, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ChannelSet.class.getName());
    private static final Duration DISCONNECT_WAIT = Duration.ofSeconds(3);
    private static final Duration MAX_CONNECT_TIMEOUT = Duration.ofMillis(Integer.MAX_VALUE);

    private final ChannelSettings settings;
    private final DeviceQueueSet queues;
    private final EventChannel events;
    private final Registration cmRegistration;
    private final Map<CmId, Outbound> byId = new ConcurrentHashMap<>();
    private final Set<MemoryRegion> regions = ConcurrentHashMap.newKeySet();
    private final AtomicLong registeredBytes = new AtomicLong();
    private volatile Consumer<AsyncEvent> fatalListener;
    private volatile AsyncEvent fatalEvent;
    // why it must not be lent again: what a handle could not free through it (see discard)
    private volatile Throwable discardedFor;
    private final Lifecycle lifecycle = new Lifecycle();
    private final Device device;

    /** Where a set is in its life; see the class comment. */
    public enum State { OPEN, DEVICE_REMOVED, CLOSED }

    /**
     * The set's {@link State} and the removal that ended {@code OPEN}; host-testable without a device. Changes are
     * made under its lock; reads (on every post) are of the volatile state, which is written after the removal.
     */
    static final class Lifecycle {
        private volatile State state = State.OPEN;
        private volatile DeviceRemoval removal;

        State state() {
            return state;
        }

        DeviceRemoval removal() {
            return removal;
        }

        /** OPEN to DEVICE_REMOVED; true for the one call that made the change. */
        synchronized boolean deviceRemoved(DeviceRemoval seen) {
            if (state != State.OPEN) {
                return false;
            }
            removal = seen;
            state = State.DEVICE_REMOVED;
            return true;
        }

        /** To CLOSED; true for the one call that made the change. */
        synchronized boolean close() {
            if (state == State.CLOSED) {
                return false;
            }
            state = State.CLOSED;
            return true;
        }

        /**
         * Throws unless the set may be used for {@code function}: the removal's error once its device is gone, an
         * {@link IllegalStateException} once it is closed.
         */
        void ensureUsable(String function) {
            State now = state;
            if (now == State.CLOSED) {
                throw new IllegalStateException("the RDMA channel set is closed");
            }
            if (now == State.DEVICE_REMOVED) {
                throw removal.error(function);
            }
        }

        /** Why the set must not be lent in this state, or null while OPEN. */
        String unhealthyReason() {
            return switch (state) {
                case OPEN -> null;
                case DEVICE_REMOVED -> removal.description();
                case CLOSED -> "closed";
            };
        }
    }

    private ChannelSet(ChannelSettings settings, DeviceRegistry devices, EventEngine engine, AutoCloseableStack opened) {
        this.settings = settings;
        this.queues = opened.push(DeviceQueueSet.open(devices.acquire(settings.deviceName(), settings.portNumber()),
            DeviceLimits.Demand.of(settings), engine, 0));
        this.device = queues.context().device();
        this.events = opened.push(EventChannel.create());
        // on the loop: a connect waiting for its CM events must not wait for a delivery thread (all of them may be
        // busy in listeners that connect)
        this.cmRegistration = opened.push(engine.registerOnLoop(Sources.cmEvents(events), this::onCmEvent));
        queues.lease().onAsyncEvent(this::onAsyncEvent);
    }

    /**
     * Opens a set on the device and port of {@code settings}.
     *
     * @throws RdmaException when the device is missing or a channel cannot be made: the function and errno of the
     *     call that failed, the message {@code cannot open RDMA channels on <device>: <the call's message>}
     * @throws IllegalArgumentException when the settings are invalid, or CqDepth, CompletionVector, MaxSendWr or
     *     MaxRecvWr are more than the device allows (naming the value and the device's limit)
     */
    public static ChannelSet open(ChannelSettings settings, DeviceRegistry devices, EventEngine engine) {
        settings.validate();
        AutoCloseableStack opened = new AutoCloseableStack();
        try {
            return new ChannelSet(settings, devices, engine, opened);
        } catch (RdmaException e) {
            opened.closeAll(e);
            throw new RdmaException("cannot open RDMA channels on " + settings.deviceDescription(), e);
        } catch (RuntimeException | Error e) {
            opened.closeAll(e);
            throw e;
        }
    }

    /** The settings this set was opened with. */
    @Override
    public ChannelSettings settings() {
        return settings;
    }

    /** The device this set is on (the configured one, or the first active one it resolved to). */
    @Override
    public String deviceName() {
        return queues.deviceName();
    }

    /** The shared device context. */
    @Override
    public DeviceContext context() {
        return queues.context();
    }

    /** What an application may see of this set (see {@link ChannelSetInfo}). */
    @Override
    public ChannelSetInfo info() {
        return new ChannelSetInfo(state().name(), events.fd(), queues.completionChannel().fd(),
            queues.completionQueue().capacity(), cmRegistration.eventsRead(), queues.completionsRead(),
            queues.completionChannel().eventsReceived(), registeredBytes());
    }

    /** Bytes registered through this set now. */
    public long registeredBytes() {
        return registeredBytes.get();
    }

    /** Endpoints open now. */
    public int endpointCount() {
        return byId.size();
    }

    /** The fatal async event this set has seen, or null while it is healthy. */
    public AsyncEvent fatalEvent() {
        return fatalEvent;
    }

    /**
     * Whether the set may be lent (again): open, no fatal event of its device or port, not {@link #discard}ed, and the
     * engine still reads its CM events and its completions. A set whose registration failed, or whose engine's loop
     * ended, would lend connections whose events are never read.
     */
    public boolean isHealthy() {
        return unhealthyReason() == null;
    }

    /** Why {@link #isHealthy()} is false, or null while it is healthy. */
    public String unhealthyReason() {
        String reason = lifecycle.unhealthyReason();
        if (reason != null) {
            return reason;
        }
        AsyncEvent fatal = fatalEvent;
        if (fatal != null) {
            return "fatal event " + fatal;
        }
        Throwable discarded = discardedFor;
        if (discarded != null) {
            return "discarded: " + discarded;
        }
        if (!cmRegistration.isActive()) {
            return "its CM events are no longer read (" + registrationState(cmRegistration) + ")";
        }
        if (!queues.isReading()) {
            return "its completions are no longer read";
        }
        return null;
    }

    private static String registrationState(Registration registration) {
        Throwable failure = registration.failure();
        return failure == null ? "registration closed or engine stopped" : "registration failed: " + failure;
    }

    /**
     * Marks the set as not to be lent again, because something made through it could not be freed ({@code cause}:
     * a failing rdma_destroy_id or ibv_dereg_mr). Its pool destroys it instead of keeping it.
     */
    @Override
    public void discard(Throwable cause) {
        if (discardedFor == null) {
            discardedFor = cause;
            LOG.log(Level.WARNING, () -> this + " is discarded: " + cause);
        }
    }

    /**
     * Where fatal async events of this set's device and port go, once each: on a delivery thread, or on the event
     * loop for a removal seen as {@code DEVICE_REMOVAL} (then a {@code DEVICE_FATAL} event saying "device removed"),
     * so the listener must return at once (hand the work to another thread).
     */
    public void onFatalEvent(Consumer<AsyncEvent> listener) {
        this.fatalListener = listener;
    }

    private void onAsyncEvent(AsyncEvent event) {
        boolean ours = !event.type().isPortEvent() || event.portNumber() == settings.portNumber();
        // a CQ error on a shared context may be another set's queue; this set then fails on its own completions
        if ((event.type().isFatal() || event.type() == AsyncEventType.CQ_ERR) && ours) {
            fatalEvent = event;
            Consumer<AsyncEvent> listener = fatalListener;
            if (listener != null) {
                listener.accept(event);
            }
        }
    }

    /** This set's {@link State} now. */
    public State state() {
        return lifecycle.state();
    }

    /** See {@link org.rdmaconnector.connector.RdmaConnection#register(ByteBuffer)}: local access only. */
    public MemoryRegion register(ByteBuffer buffer) {
        return register(buffer, Set.of());
    }

    /** See {@link org.rdmaconnector.connector.RdmaConnection#register(ByteBuffer, Set)}. */
    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<RemoteAccess> remoteAccess) {
        lifecycle.ensureUsable("ibv_reg_mr");
        if (buffer == null || !buffer.isDirect()) {
            throw new IllegalArgumentException("buffer must be a direct ByteBuffer");
        }
        Set<Access> access = Access.withRemote(remoteAccess);
        reserve(buffer.capacity());
        try {
            MemoryRegion region = queues.protectionDomain().register(buffer, access);
            regions.add(region);
            return region;
        } catch (RuntimeException e) {
            registeredBytes.addAndGet(-buffer.capacity());
            throw e;
        }
    }

    /** {@code region} as this set registered it; one registered elsewhere (or deregistered) is refused. */
    private MemoryRegion registered(org.rdmaconnector.connector.MemoryRegion region) {
        if (region instanceof MemoryRegion verbsRegion && regions.contains(verbsRegion)) {
            return verbsRegion;
        }
        throw new IllegalArgumentException("memory region " + region + " is not registered through this connection"
            + " (register it with this connection's register(ByteBuffer), and keep it until the requests complete)");
    }

    /**
     * Deregisters a region made by {@link #register}; other regions are left alone. When ibv_dereg_mr fails the set
     * is {@link #discard}ed (the region stays with its protection domain, freed when the set closes) and the error
     * is thrown.
     */
    @Override
    public void deregister(MemoryRegion region) {
        if (regions.remove(region)) {
            registeredBytes.addAndGet(-region.length());
            try {
                region.close();
            } catch (RuntimeException e) {
                discard(e);
                throw e;
            }
        }
    }

    private void reserve(long bytes) {
        long now = registeredBytes.addAndGet(bytes);
        if (now > settings.maxRegisteredBytes()) {
            registeredBytes.addAndGet(-bytes);
            throw new IllegalArgumentException("registering " + bytes + " bytes would pass the memory registration "
                + "limit of " + settings.maxRegisteredBytes() + " bytes (MaxRegisteredBytes; " + (now - bytes)
                + " registered)");
        }
    }

    /** See {@link org.rdmaconnector.connector.RdmaConnection#connect}. */
    @Override
    public RdmaEndpoint connect(InetSocketAddress remote, Duration timeout) {
        lifecycle.ensureUsable("rdma_connect");
        if (remote == null || remote.isUnresolved()) {
            throw new IllegalArgumentException("remote must be a resolved address, was " + remote);
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()
            || timeout.compareTo(MAX_CONNECT_TIMEOUT) > 0) {
            throw new IllegalArgumentException("timeout must be positive and at most " + MAX_CONNECT_TIMEOUT.toMillis()
                + " ms (rdma_resolve_addr takes int milliseconds), was " + timeout);
        }
        int perEndpoint = settings.maxSendWr() + settings.maxRecvWr();
        if ((long) (byId.size() + 1) * perEndpoint > settings.cqDepth()) {
            throw new IllegalStateException("this connection already has " + byId.size() + " endpoints open; another "
                + "could overrun its completion queue of " + settings.cqDepth() + " entries (CqDepth; each endpoint "
                + "needs MaxSendWr + MaxRecvWr = " + perEndpoint + "): close one or raise CqDepth");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        Outbound endpoint = new Outbound(events.createId(PortSpace.TCP), remote);
        byId.put(endpoint.id, endpoint);
        try {
            endpoint.id.resolveAddress(null, remote, timeout);
            endpoint.expect(CmEventType.ADDR_RESOLVED, "rdma_resolve_addr", deadline);
            endpoint.id.resolveRoute(remaining(deadline));
            endpoint.expect(CmEventType.ROUTE_RESOLVED, "rdma_resolve_route", deadline);
            String routed = endpoint.id.deviceName();
            if (!deviceName().equals(routed)) {
                throw new IllegalStateException(remote + " is reached through device " + routed + ", and this "
                    + "connection is on device " + deviceName() + "; use a connection factory for " + routed);
            }
            reserve(endpointStagingBytes());
            endpoint.reserved = true;
            endpoint.connection = new RcConnection(endpoint.id, queues,
                new QueuePairCapabilities(settings.maxSendWr(), settings.maxRecvWr(), 1, 1, settings.maxInlineData()),
                RdmaEndpoint.MAX_STAGED_MESSAGE, settings.maxSendWr(), settings.maxRecvWr());
            queues.route(endpoint.connection.qpNumber(), endpoint::polled);
            if (settings.ackTimeout() != 0) {
                endpoint.id.setAckTimeout(settings.ackTimeout());
            }
            endpoint.id.connect(ConnectionParameters.defaults());
            endpoint.expect(CmEventType.ESTABLISHED, "rdma_connect", deadline);
            endpoint.connection.setMinRnrTimer(settings.minRnrTimerMicros()); // the CM's RTR transition: 655.36 ms
            lifecycle.ensureUsable("rdma_connect"); // a removal seen while connecting: the endpoint is closed below
            return endpoint;
        } catch (RuntimeException | Error e) {
            endpoint.close();
            throw e;
        }
    }

    /** What one endpoint registers for its own send and receive slots. */
    private long endpointStagingBytes() {
        return RcConnection.stagingBytes(RdmaEndpoint.MAX_STAGED_MESSAGE, settings.maxSendWr(), settings.maxRecvWr());
    }

    private static Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1), deadline - System.nanoTime()));
    }

    private void onCmEvent(CmEvent event) {
        if (event.type() == CmEventType.DEVICE_REMOVAL) {
            deviceRemoved(DeviceRemoval.onCmId(device)); // the set's device: also for an endpoint closed already
        }
        Outbound endpoint = byId.get(event.id());
        if (endpoint == null) {
            LOG.log(Level.DEBUG, () -> "CM event for a closed endpoint: " + event); // built only when logged
            return;
        }
        endpoint.onEvent(event);
    }

    /**
     * On the loop, once: every endpoint's posted requests end with {@code removal}'s error and nothing waits for a
     * disconnect any more; the set is never lent again; the fatal listener hears of it. Freeing is left to whoever
     * holds the set (the handle's close, the pool), off the loop.
     */
    private void deviceRemoved(DeviceRemoval removal) {
        if (!lifecycle.deviceRemoved(removal)) {
            return;
        }
        LOG.log(Level.WARNING, () -> this + ": " + removal.description() + "; its " + byId.size() + " endpoints "
            + "fail, and it is destroyed when given back");
        for (Outbound endpoint : byId.values()) {
            endpoint.deviceRemoved(removal);
        }
        Consumer<AsyncEvent> listener = fatalListener;
        if (listener != null) {
            try {
                listener.accept(removal.asyncEvent());
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "the fatal-event listener of " + this + " failed on the device removal", e);
            }
        }
    }

    /**
     * Closes every endpoint and memory region made through this set; the channels stay open. The endpoints are
     * disconnected together and waited for with one deadline ({@link #DISCONNECT_WAIT} in all, however many peers
     * are dead), then destroyed.
     */
    public void cleanup() {
        AutoCloseableStack made = new AutoCloseableStack(); // newest first: the endpoints, then the regions
        for (MemoryRegion region : List.copyOf(regions)) {
            made.push(() -> deregister(region));
        }
        List<Outbound> endpoints = byId.values().stream().filter(Outbound::claimClose).toList();
        made.push(() -> Disconnects.closeAll(endpoints, DISCONNECT_WAIT));
        try {
            made.closeAll(null); // each is freed even when another fails
        } catch (RuntimeException e) {
            discard(e);
            throw e;
        }
    }

    /** Frees everything: endpoints, regions, the engine's registrations, the channels, the PD and the lease. */
    @Override
    public void close() {
        if (!lifecycle.close()) {
            return;
        }
        AutoCloseableStack stack = new AutoCloseableStack();
        stack.push(queues);
        stack.push(events);
        stack.push(cmRegistration);
        stack.push(this::cleanup);
        stack.closeAll(null);
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return lifecycle.state() == State.CLOSED;
    }

    @Override
    public String toString() {
        State state = lifecycle.state();
        return "ChannelSet[" + deviceName() + " port " + settings.portNumber() + ", " + byId.size() + " endpoints, "
            + registeredBytes + " bytes registered" + (state == State.OPEN ? "]" : ", " + state + "]");
    }

    /** An outbound connection of this set; closed by the one caller that claims it, alone or with its set's others. */
    private final class Outbound implements RdmaEndpoint, Disconnects.Disconnecting {
        final CmId id;
        final InetSocketAddress remote;
        final LinkedBlockingQueue<CmEvent> connecting = new LinkedBlockingQueue<>();
        final CountDownLatch disconnected = new CountDownLatch(1);
        volatile RcConnection connection;
        volatile boolean connected;
        volatile boolean reserved;
        private boolean closed;

        Outbound(CmId id, InetSocketAddress remote) {
            this.id = id;
            this.remote = remote;
        }

        void onEvent(CmEvent event) {
            if (event.type() == CmEventType.ESTABLISHED) {
                connected = true; // before the connecting thread sees it: a DISCONNECTED right after is answered
            }
            if (event.type() == CmEventType.DISCONNECTED) {
                connected = false;
                RcConnection c = connection;
                if (c != null) {
                    try {
                        c.disconnect(); // the peer asked (DREQ): the answer (DREP), unless we asked first
                    } catch (RuntimeException e) {
                        LOG.log(Level.DEBUG, "answering the disconnect of " + remote + " failed", e);
                    }
                }
                disconnected.countDown();
            }
            connecting.add(event);
        }

        void expect(CmEventType type, String function, long deadline) {
            CmEvent event;
            try {
                event = connecting.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw RdmaErrors.of(function, Layout.EINTR, "interrupted while connecting to " + remote);
            }
            if (event == null) {
                throw RdmaErrors.of(function, Layout.ETIMEDOUT, "no " + type + " from " + remote
                    + " within the timeout");
            }
            if (event.type() == CmEventType.DEVICE_REMOVAL) {
                lifecycle.ensureUsable(function); // throws the removal's error
            }
            if (event.type() != type) {
                int errno = event.status() < 0 ? -event.status() : event.type() == CmEventType.REJECTED
                    ? Layout.ECONNREFUSED : Layout.EHOSTUNREACH;
                throw RdmaErrors.of(function, errno, event.type() + " (status " + event.status() + ") from "
                    + remote + (event.privateData().length > 0 ? ", private data " + event.privateData().length
                    + " bytes" : ""));
            }
        }

        /**
         * On the loop, as the CQ is polled: completes the request; a failed one (any status but a flush) ends the
         * connection, as it does an accepted one: the queue pair is in ERROR, and the peer is told at once.
         */
        PostedRequest polled(PolledCompletion wc) {
            PostedRequest request = connection.complete(wc);
            if (!wc.isSuccess() && wc.status() != Layout.IBV_WC_WR_FLUSH_ERR && connected) {
                LOG.log(Level.WARNING, this + " failed: " + (request == null ? "a request" : request.kind()) + " "
                    + WorkCompletion.statusText(wc.status()) + "; disconnecting");
                try {
                    disconnect();
                } catch (RuntimeException e) {
                    LOG.log(Level.DEBUG, "disconnecting " + this + " after its failed request failed", e);
                }
            }
            return request;
        }

        /** The device is gone: posted requests end with its error, the disconnect is not waited for. */
        void deviceRemoved(DeviceRemoval removal) {
            connected = false; // no rdma_disconnect on a removed device: there is no peer to answer it
            RcConnection c = connection;
            if (c != null) {
                c.deviceRemoved(removal);
            }
            disconnected.countDown();
        }

        private RcConnection established(String function) {
            lifecycle.ensureUsable(function);
            RcConnection c = connection;
            if (c == null || !connected) {
                throw new IllegalStateException("the endpoint to " + remote + " is not connected");
            }
            return c;
        }

        @Override
        public InetSocketAddress localAddress() {
            return id.localAddress();
        }

        @Override
        public InetSocketAddress peerAddress() {
            return remote;
        }

        @Override
        public boolean isConnected() {
            return connected;
        }

        @Override
        public WorkRequest send(org.rdmaconnector.connector.MemoryRegion region, int offset, int length,
                                boolean signaled) {
            return established("ibv_post_send").send(registered(region), offset, length, signaled);
        }

        @Override
        public WorkRequest send(byte[] message, int offset, int length, boolean signaled) {
            return established("ibv_post_send").sendStaged(message, offset, length, signaled);
        }

        @Override
        public WorkRequest receive(org.rdmaconnector.connector.MemoryRegion region, int offset, int length) {
            return established("ibv_post_recv").receive(registered(region), offset, length);
        }

        @Override
        public WorkRequest receive() {
            return established("ibv_post_recv").receiveStaged();
        }

        @Override
        public WorkRequest write(org.rdmaconnector.connector.MemoryRegion local, int offset, int length,
                                 RemoteRegion remote, int remoteOffset, boolean signaled) {
            return post(RdmaOperation.write(local, offset, length, remote, remoteOffset, signaled));
        }

        @Override
        public WorkRequest writeWithImmediate(org.rdmaconnector.connector.MemoryRegion local, int offset, int length,
                                              RemoteRegion remote, int remoteOffset, int immediateData,
                                              boolean signaled) {
            return post(RdmaOperation.writeWithImmediate(local, offset, length, remote, remoteOffset, immediateData,
                signaled));
        }

        @Override
        public WorkRequest read(org.rdmaconnector.connector.MemoryRegion local, int offset, int length,
                                RemoteRegion remote, int remoteOffset, boolean signaled) {
            return post(RdmaOperation.read(local, offset, length, remote, remoteOffset, signaled));
        }

        private WorkRequest post(RdmaOperation operation) {
            return established("ibv_post_send").post(operation, registered(operation.local()));
        }

        @Override
        public void close() {
            if (claimClose()) {
                Disconnects.closeAll(List.of(this), DISCONNECT_WAIT);
            }
        }

        /** True for the one caller that closes this endpoint. */
        synchronized boolean claimClose() {
            if (closed) {
                return false;
            }
            closed = true;
            return true;
        }

        @Override
        public boolean disconnect() {
            RcConnection c = connection;
            if (connected && c != null) {
                connected = false;
                c.disconnect();
                return true;
            }
            return false;
        }

        @Override
        public boolean awaitDisconnected(long deadline) throws InterruptedException {
            return disconnected.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }

        @Override
        public void destroy() {
            byId.remove(id);
            RcConnection c = connection;
            if (c != null) {
                queues.unroute(c.qpNumber());
                c.close();
            } else {
                id.close();
            }
            if (reserved) {
                registeredBytes.addAndGet(-endpointStagingBytes());
            }
        }

        @Override
        public String toString() {
            return "RdmaEndpoint[" + remote + (connected ? ", connected]" : "]");
        }
    }
}
