package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.rdmaconnector.connector.AcceptPolicy;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.InboundConnection;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.verbs.CmEvent;
import org.rdmaconnector.verbs.CmEventType;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.CompletionChannel;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.ConnectionParameters;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.PortSpace;
import org.rdmaconnector.verbs.ProtectionDomain;
import org.rdmaconnector.verbs.QueuePairCapabilities;
import org.rdmaconnector.verbs.RdmaException;
import org.rdmaconnector.verbs.WorkCompletion;
import org.rdmaconnector.verbs.engine.EventEngine;
import org.rdmaconnector.verbs.engine.Registration;
import org.rdmaconnector.verbs.engine.Sources;
import org.rdmaconnector.verbs.jna.Layout;

/**
 * One listening CM id on an address and port, shared by its activations: accepts connections (policy, allowed
 * peers), gives each its queue pair and posted receives, answers the peer's disconnect, and delivers CM events and
 * completions to the activations through the engine. Without a device it waits and retries with backoff.
 */
final class Listener {
    private static final System.Logger LOG = System.getLogger(Listener.class.getName());
    private static final int CQ_DEPTH = 8192;
    private static final int MAX_IN_FLIGHT = 256;
    private static final Duration FIRST_RETRY = Duration.ofSeconds(1);
    private static final Duration LAST_RETRY = Duration.ofSeconds(30);
    // a safety net only: after a disconnect the queue pair is in ERROR and every posted request completes
    private static final Duration DISCONNECT_DEADLINE = Duration.ofSeconds(60);
    private static final Duration STOP_WAIT = Duration.ofSeconds(3);

    private final ListenerSettings settings;
    private final DeviceRegistry devices;
    private final EventEngine engine;
    private final Scheduler scheduler;
    private final java.util.function.Consumer<Listener> onStopped;
    private final List<Activation> activations = new CopyOnWriteArrayList<>();
    private final Map<CmId, Inbound> connections = new ConcurrentHashMap<>();
    private final Map<String, PerDevice> perDevice = new HashMap<>();
    private final AtomicLong connectionNumbers = new AtomicLong();
    private final int maxConnections;

    // guarded by 'this'
    private Activation.State state = Activation.State.WAITING_FOR_DEVICE;
    private String detail = "starting";
    private boolean starting;
    private boolean stopped;
    private Duration nextRetry = FIRST_RETRY;
    private Runnable cancelRetry;
    private EventChannel events;
    private CmId listenId;
    private Registration cmRegistration;

    Listener(ListenerSettings settings, DeviceRegistry devices, EventEngine engine, Scheduler scheduler,
             java.util.function.Consumer<Listener> onStopped) {
        this.settings = settings;
        this.devices = devices;
        this.engine = engine;
        this.scheduler = scheduler;
        this.onStopped = onStopped;
        this.maxConnections = Math.max(1, CQ_DEPTH / (2 * settings.receiveBufferCount()));
    }

    ListenerSettings settings() {
        return settings;
    }

    List<Activation> activations() {
        return List.copyOf(activations);
    }

    synchronized Activation.State state() {
        return state;
    }

    synchronized String stateDetail() {
        return detail;
    }

    int connectionCount() {
        return connections.size();
    }

    synchronized boolean isStopped() {
        return stopped;
    }

    void add(Activation activation) {
        activations.add(activation);
    }

    void remove(Activation activation) {
        activations.remove(activation);
        if (activations.isEmpty()) {
            stop();
        }
    }

    // ------------------------------------------------------------------ start, retry, stop

    /** Tries to listen now unless it already listens or a try is scheduled. */
    void startIfIdle() {
        synchronized (this) {
            if (stopped || starting || state == Activation.State.LISTENING || cancelRetry != null) {
                return;
            }
            starting = true;
        }
        tryStart();
    }

    private void tryStart() {
        InetSocketAddress address = settings.socketAddress();
        EventChannel channel = null;
        try {
            channel = EventChannel.create();
            CmId id = channel.createId(PortSpace.TCP);
            id.bind(address);
            id.listen(settings.backlog());
            Registration registration = engine.register(Sources.cmEvents(channel), this::onCmEvent, MAX_IN_FLIGHT);
            synchronized (this) {
                starting = false;
                cancelRetry = null;
                if (stopped) {
                    registration.close();
                    channel.close();
                    return;
                }
                events = channel;
                listenId = id;
                cmRegistration = registration;
                state = Activation.State.LISTENING;
                detail = "listening on " + id.localAddress() + (id.deviceName() == null ? ""
                    : " (device " + id.deviceName() + ")");
                nextRetry = FIRST_RETRY;
            }
            LOG.log(Level.INFO, "RDMA listener " + detail + " for " + names());
        } catch (RuntimeException | LinkageError e) { // LinkageError: rdma-core is not installed
            if (channel != null) {
                channel.close();
            }
            waitAndRetry(e);
        }
    }

    private void waitAndRetry(Throwable cause) {
        Duration delay;
        synchronized (this) {
            starting = false;
            if (stopped) {
                return;
            }
            delay = nextRetry;
            nextRetry = nextRetry.multipliedBy(2).compareTo(LAST_RETRY) > 0 ? LAST_RETRY : nextRetry.multipliedBy(2);
            String reason = String.valueOf(cause.getMessage());
            boolean changed = !detail.startsWith("waiting: " + reason);
            state = Activation.State.WAITING_FOR_DEVICE;
            detail = "waiting: " + reason + "; next try in " + delay.toSeconds() + " s";
            LOG.log(changed ? Level.WARNING : Level.DEBUG, "RDMA listener on " + settings.address() + ":"
                + settings.port() + " for " + names() + " is waiting for its device: " + reason + "; retrying every "
                + "few seconds (up to " + LAST_RETRY.toSeconds() + " s)");
            cancelRetry = scheduler.schedule(this::retry, delay);
        }
    }

    private void retry() {
        synchronized (this) {
            cancelRetry = null;
            if (stopped || starting) {
                return;
            }
            starting = true;
        }
        tryStart();
    }

    private String names() {
        return activations.stream().map(Activation::name).toList().toString();
    }

    /** Stops listening: disconnects the connections (bounded wait), destroys every id, frees the device resources. */
    void stop() {
        Registration registration;
        EventChannel channel;
        synchronized (this) {
            if (stopped) {
                return;
            }
            stopped = true;
            state = Activation.State.STOPPED;
            detail = "stopped";
            if (cancelRetry != null) {
                cancelRetry.run();
                cancelRetry = null;
            }
            registration = cmRegistration;
            channel = events;
        }
        for (Inbound connection : List.copyOf(connections.values())) {
            connection.disconnect();
        }
        long deadline = System.nanoTime() + STOP_WAIT.toNanos();
        while (!connections.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        release(registration, channel);
        onStopped.accept(this);
        LOG.log(Level.INFO, "RDMA listener on " + settings.address() + ":" + settings.port() + " stopped");
    }

    /**
     * The listening id's device is gone (DEVICE_REMOVAL: rdma_get_cm_event(3) says to destroy the id): frees all it
     * holds on the device, so the kernel can finish the removal, and waits for the device to listen again. Runs off
     * the delivery thread of the CM events, as it closes their registration.
     */
    private void relisten(CmId removedFrom) {
        Registration registration;
        EventChannel channel;
        synchronized (this) {
            if (stopped || listenId != removedFrom) {
                return;
            }
            registration = cmRegistration;
            channel = events;
            cmRegistration = null;
            events = null;
            listenId = null;
            starting = true; // no other start until this one is through
            state = Activation.State.WAITING_FOR_DEVICE;
            detail = "waiting: the device was removed; releasing it";
        }
        try {
            release(registration, channel);
        } finally {
            waitAndRetry(new IllegalStateException("its device was removed (DEVICE_REMOVAL); what the listener held on "
                + "it is released"));
        }
    }

    /**
     * After a DEVICE_REMOVAL: frees the listener's resources on every device no connection uses (the next connection
     * on a device that is still there sets them up again).
     */
    private void releaseUnusedDevices() {
        List<PerDevice> unused = new ArrayList<>();
        synchronized (perDevice) {
            perDevice.values().removeIf(device -> device.byQp.isEmpty() && unused.add(device));
        }
        unused.forEach(PerDevice::close);
    }

    /** Closes the CM registration, destroys the connections, then frees the per-device resources and the channel. */
    private void release(Registration registration, EventChannel channel) {
        if (registration != null) {
            registration.close();
        }
        for (Inbound connection : List.copyOf(connections.values())) {
            destroy(connection);
        }
        synchronized (perDevice) {
            for (PerDevice device : perDevice.values()) {
                device.close();
            }
            perDevice.clear();
        }
        if (channel != null) {
            channel.close(); // destroys the listening id
        }
    }

    // ------------------------------------------------------------------ CM events

    private void onCmEvent(CmEvent event) {
        if (event.type() == CmEventType.CONNECT_REQUEST) {
            onConnectRequest(event);
            return;
        }
        Inbound connection = connections.get(event.id());
        if (connection == null) {
            if (event.type() == CmEventType.DEVICE_REMOVAL) {
                // the listening id's, or that of a connection already destroyed (after DISCONNECTED, say)
                scheduler.schedule(() -> {
                    relisten(event.id());
                    releaseUnusedDevices();
                }, Duration.ZERO);
            } else if (event.type() == CmEventType.ADDR_CHANGE) {
                LOG.log(Level.INFO, "RDMA listener on " + settings.address() + ":" + settings.port()
                    + ": ADDR_CHANGE (the network device of the address changed, e.g. a bonding failover); it keeps "
                    + "listening");
            }
            return;
        }
        switch (event.type()) {
            case ESTABLISHED -> {
                connection.connected = true;
                deliver(new Event(event, connection, Decision.NONE));
            }
            case DISCONNECTED -> {
                connection.onDisconnected();
                deliver(new Event(event, connection, Decision.NONE));
                destroyWhenDrained(connection);
            }
            case TIMEWAIT_EXIT -> deliver(new Event(event, connection, Decision.NONE));
            default -> {
                deliver(new Event(event, connection, Decision.NONE));
                destroy(connection); // CONNECT_ERROR, UNREACHABLE, REJECTED, DEVICE_REMOVAL ...
                if (event.type() == CmEventType.DEVICE_REMOVAL) {
                    // a wildcard listening id gets no DEVICE_REMOVAL: let go of the device with its last connection
                    scheduler.schedule(this::releaseUnusedDevices, Duration.ZERO);
                }
            }
        }
    }

    private void onConnectRequest(CmEvent request) {
        CmId id = request.id();
        InetSocketAddress peer = id.peerAddress();
        if (peer == null || !settings.allows(peer.getAddress())) {
            rejectQuietly(id, "peer " + peer + " is not among the allowed peers " + settings.allowedPeers());
            return;
        }
        if (connections.size() >= maxConnections) {
            rejectQuietly(id, "the listener holds its maximum of " + maxConnections + " connections");
            return;
        }
        Inbound connection;
        try {
            synchronized (perDevice) { // a device's resources are not released while a connection is set up on them
                connection = new Inbound(connectionNumbers.incrementAndGet(), id, deviceOf(id.deviceName()));
            }
        } catch (RuntimeException | Error e) {
            LOG.log(Level.WARNING, "cannot set up a connection for " + peer + ": " + e);
            rejectQuietly(id, String.valueOf(e.getMessage()));
            return;
        }
        connections.put(id, connection);
        AcceptPolicy policy = settings.acceptPolicy();
        Event event = new Event(request, connection, switch (policy) {
            case ACCEPT -> Decision.ACCEPTED;
            case REJECT -> Decision.REJECTED;
            case ENDPOINT_DECIDES -> Decision.PENDING;
        });
        try {
            if (policy == AcceptPolicy.ACCEPT) {
                // before rdma_accept: the peer may send at once, and a receive delivered (on another thread) before
                // this flag was set found the connection "not established" and could not answer
                connection.accepted = true;
                id.accept(ConnectionParameters.defaults());
            }
            deliver(event);
            if (event.isDecisionPending() && activations.stream().noneMatch(Activation::receivesCmEvents)) {
                LOG.log(Level.WARNING, "accept policy endpoint-decides on " + settings.address() + ":"
                    + settings.port() + ", and no CmEventListener endpoint is active to decide: rejecting " + peer);
            }
            Decision decision = event.settle();
            if (decision == Decision.REJECTED) {
                id.reject(event.rejectData);
                destroy(connection);
            } else if (policy != AcceptPolicy.ACCEPT) {
                connection.accepted = true; // before rdma_accept, as above
                id.accept(ConnectionParameters.defaults());
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "accepting " + peer + " failed: " + e.getMessage());
            destroy(connection);
        }
    }

    private static void rejectQuietly(CmId id, String reason) {
        LOG.log(Level.INFO, "rejecting a connection request: " + reason);
        try {
            String text = "rejected: " + reason;
            id.reject(text.substring(0, Math.min(text.length(), 140)).getBytes(StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "rdma_reject failed", e);
        } finally {
            id.close();
        }
    }

    private void deliver(ConnectionEvent event) {
        for (Activation activation : activations) {
            if (activation.receivesCmEvents()) {
                activation.deliver(event);
            }
        }
    }

    // ------------------------------------------------------------------ completions

    private void onCompletion(PerDevice device, WorkCompletion wc) {
        Inbound connection = device.byQp.get(wc.qpNumber());
        if (connection == null) {
            return;
        }
        WorkRequest request = connection.rc.complete(wc);
        if (request == null) {
            return;
        }
        boolean receive = request.kind() == WorkRequest.Kind.RECEIVE;
        if (!wc.isSuccess() && !connection.disconnected) {
            // the queue pair is in ERROR now: every posted request flushes. A flush alone follows a disconnect of
            // ours (deactivation); any other status is a failure (e.g. a message larger than the buffer)
            if (wc.status() != Layout.IBV_WC_WR_FLUSH_ERR) {
                LOG.log(Level.WARNING, "connection " + connection.number + " with " + connection.peer + " failed: "
                    + (receive ? "receive " : "send ") + wc.statusText() + "; disconnecting");
            }
            connection.connected = false;
            connection.disconnected = true;
            connection.disconnect();
            destroyWhenDrained(connection);
        }
        if (receive && wc.isSuccess() && connection.accepting()) {
            try {
                connection.rc.receiveStaged(); // give the buffer back to the queue pair
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "re-posting a receive on connection " + connection.number + " failed", e);
            }
        }
        boolean internalFlush = receive && wc.status() == Layout.IBV_WC_WR_FLUSH_ERR;
        if (!internalFlush) {
            long sequence = receive ? ++connection.receives : ++connection.sends;
            Completed completed = new Completed(connection, wc, receive, request.data(), sequence);
            for (Activation activation : activations) {
                if (activation.receivesCompletions()) {
                    activation.deliver(completed);
                }
            }
        }
        if (connection.disconnected && connection.rc.outstanding() == 0) {
            destroy(connection);
        }
    }

    private PerDevice deviceOf(String name) {
        synchronized (perDevice) {
            PerDevice device = perDevice.get(name);
            if (device == null) {
                device = new PerDevice(devices.acquire(name, 1));
                perDevice.put(name, device);
            }
            return device;
        }
    }

    private void destroyWhenDrained(Inbound connection) {
        if (connection.rc.outstanding() == 0) {
            destroy(connection);
        } else {
            scheduler.schedule(() -> destroy(connection), DISCONNECT_DEADLINE);
        }
    }

    private void destroy(Inbound connection) {
        if (connections.remove(connection.id) == null) {
            return;
        }
        connection.device.byQp.remove(connection.rc.qpNumber());
        try {
            connection.rc.close();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "destroying connection " + connection.number + " failed", e);
        }
    }

    // ------------------------------------------------------------------ per device, per connection, events

    /** The protection domain, completion channel and queue of the connections accepted on one device. */
    private final class PerDevice {
        final DeviceRegistry.Lease lease;
        final ProtectionDomain pd;
        final CompletionChannel channel;
        final CompletionQueue cq;
        final Registration completions;
        final Map<Integer, Inbound> byQp = new ConcurrentHashMap<>();

        PerDevice(DeviceRegistry.Lease lease) {
            AutoCloseableStack opened = new AutoCloseableStack();
            try {
                this.lease = opened.push(lease);
                this.pd = opened.push(lease.context().allocateProtectionDomain());
                this.channel = opened.push(lease.context().createCompletionChannel());
                this.cq = opened.push(lease.context().createCompletionQueue(CQ_DEPTH, channel, 0));
                this.completions = engine.register(Sources.completions(channel), wc -> onCompletion(this, wc),
                    MAX_IN_FLIGHT);
            } catch (RuntimeException | Error e) {
                opened.closeAll(e);
                throw e;
            }
        }

        void close() {
            AutoCloseableStack stack = new AutoCloseableStack();
            stack.push(lease);
            stack.push(pd);
            stack.push(channel);
            stack.push(cq);
            stack.push(completions);
            try {
                stack.closeAll(null);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "closing the listener's resources on " + lease.deviceName() + " failed", e);
            }
        }
    }

    private enum Decision { NONE, PENDING, ACCEPTED, REJECTED }

    /** An accepted (or being accepted) connection. */
    private final class Inbound implements InboundConnection {
        final long number;
        final CmId id;
        final PerDevice device;
        final RcConnection rc;
        final InetSocketAddress peer;
        final InetSocketAddress local;
        volatile boolean accepted;
        volatile boolean connected;
        volatile boolean disconnected;
        private boolean disconnectSent;
        long receives;
        long sends;

        Inbound(long number, CmId id, PerDevice device) {
            this.number = number;
            this.id = id;
            this.device = device;
            this.peer = id.peerAddress();
            this.local = id.localAddress();
            int count = settings.receiveBufferCount();
            this.rc = new RcConnection(id, device.pd, device.cq, QueuePairCapabilities.of(count, count),
                settings.receiveBufferSize(), count, count);
            device.byQp.put(rc.qpNumber(), this);
            try {
                for (int i = 0; i < count; i++) {
                    rc.receiveStaged();
                }
            } catch (RuntimeException e) {
                device.byQp.remove(rc.qpNumber());
                rc.close();
                throw e;
            }
        }

        boolean accepting() {
            return !disconnected;
        }

        void onDisconnected() {
            connected = false;
            disconnected = true;
            disconnect(); // the peer asked (DREQ): answer (DREP); the queue pair then flushes what is posted
        }

        @Override
        public long number() {
            return number;
        }

        @Override
        public InetSocketAddress peerAddress() {
            return peer;
        }

        @Override
        public InetSocketAddress localAddress() {
            return local;
        }

        @Override
        public boolean isConnected() {
            return connected;
        }

        @Override
        public WorkRequest send(byte[] message) {
            if (!accepted || disconnected) { // the queue pair can send once accepted, before ESTABLISHED is read
                throw new IllegalStateException("connection " + number + " with " + peer + " is not established");
            }
            return rc.sendStaged(message);
        }

        @Override
        public void disconnect() {
            synchronized (this) {
                if (disconnectSent) {
                    return;
                }
                disconnectSent = true;
            }
            try {
                id.disconnect();
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "rdma_disconnect of connection " + number + " failed", e);
            }
        }

        @Override
        public String toString() {
            return "InboundConnection[" + number + ", peer " + peer + (connected ? ", connected]" : "]");
        }
    }

    /** A delivered CM event; for a pending CONNECT_REQUEST, the decision of the listeners. */
    private final class Event implements ConnectionEvent {
        private final CmEvent event;
        private final Inbound connection;
        private Decision decision;
        byte[] rejectData;

        Event(CmEvent event, Inbound connection, Decision decision) {
            this.event = event;
            this.connection = connection;
            this.decision = decision;
        }

        @Override
        public CmEventType type() {
            return event.type();
        }

        @Override
        public int status() {
            return event.status();
        }

        @Override
        public InboundConnection connection() {
            return connection;
        }

        @Override
        public byte[] privateData() {
            return event.privateData();
        }

        @Override
        public InetSocketAddress listenAddress() {
            return settings.socketAddress();
        }

        @Override
        public synchronized boolean isDecisionPending() {
            return decision == Decision.PENDING;
        }

        @Override
        public synchronized boolean isAccepted() {
            return decision == Decision.ACCEPTED;
        }

        @Override
        public synchronized void accept() {
            decide(Decision.ACCEPTED, null);
        }

        @Override
        public synchronized void reject(byte[] privateData) {
            if (privateData != null && privateData.length > ConnectionParameters.MAX_PRIVATE_DATA) {
                throw new IllegalArgumentException("privateData must be at most "
                    + ConnectionParameters.MAX_PRIVATE_DATA + " bytes, was " + privateData.length);
            }
            decide(Decision.REJECTED, privateData);
        }

        private void decide(Decision to, byte[] data) {
            if (decision != Decision.PENDING) {
                throw new IllegalStateException("this " + event.type() + " has no decision pending (" + decision
                    + "; the listener's accept policy is " + settings.acceptPolicy().text() + ")");
            }
            decision = to;
            rejectData = data;
        }

        /** After delivery: a request nobody decided is rejected. */
        synchronized Decision settle() {
            if (decision == Decision.PENDING) {
                decision = Decision.REJECTED;
                rejectData = "no endpoint accepted the request".getBytes(StandardCharsets.UTF_8);
            }
            return decision;
        }

        @Override
        public String toString() {
            return event.type() + "[connection " + connection.number + ", peer " + connection.peer + ", status "
                + event.status() + "]";
        }
    }

    /** A delivered completion. */
    private record Completed(Inbound connection, WorkCompletion workCompletion, boolean isReceive, byte[] received,
                             long sequence) implements MessageCompletion {
        @Override
        public byte[] data() {
            return received == null ? new byte[0] : received.clone();
        }

        @Override
        public String toString() {
            return (isReceive ? "receive " : "send ") + sequence + " of connection " + connection.number + " ("
                + workCompletion.statusText() + ", " + workCompletion.byteLength() + " bytes)";
        }
    }
}
