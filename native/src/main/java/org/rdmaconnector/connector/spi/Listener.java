package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.CmEvent;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.PortSpace;
import org.rdmaconnector.verbs.engine.EventEngine;
import org.rdmaconnector.verbs.engine.Registration;
import org.rdmaconnector.verbs.engine.Sources;
import org.rdmaconnector.verbs.jna.Layout;

/**
 * The acceptor: one listening CM id on an address and port, shared by its activations. It listens (without a device
 * it waits and retries with backoff), hands CONNECT_REQUESTs and the later CM events of their ids to its
 * {@link InboundConnections}, keeps one {@link DeviceQueueSet} per device its connections use, lets go of a removed
 * device (DEVICE_REMOVAL) and listens again, and stops: after {@link #stop()} nothing is created. It is the
 * {@link Deliveries} of its connections: their events go to the activations.
 */
final class Listener implements Deliveries {
    private static final System.Logger LOG = System.getLogger(Listener.class.getName());
    private static final int MAX_IN_FLIGHT = 256;
    private static final Duration STOP_WAIT = Duration.ofSeconds(3);
    // how long a device's queue set outlives its last connection (a steady stream of connections keeps it)
    private static final Duration IDLE_RELEASE = Duration.ofSeconds(2);

    private final ListenerSettings settings;
    private final DeviceRegistry devices;
    private final EventEngine engine;
    private final Scheduler scheduler;
    private final Consumer<Listener> onStopped;
    // copied on change (rare), read per delivery without a lock or an iterator
    private volatile Activation[] activations = new Activation[0];
    private final Object activationsLock = new Object();
    private final InboundConnections connections;
    // guarded by itself; after 'devicesReleased' (stop) nothing is opened on a device again
    private final Map<String, DeviceQueueSet> perDevice = new HashMap<>();
    private boolean devicesReleased;

    // guarded by 'this'
    private Activation.State state = Activation.State.WAITING_FOR_DEVICE;
    private String detail = "starting";
    private boolean starting;
    private boolean stopped;
    // failed tries to listen since it last listened (SetupRetry counts them)
    private int failures;
    private Runnable cancelRetry;
    private EventChannel events;
    private CmId listenId;
    private Registration cmRegistration;

    Listener(ListenerSettings settings, DeviceRegistry devices, EventEngine engine, Scheduler scheduler,
             Consumer<Listener> onStopped) {
        this.settings = settings;
        this.devices = devices;
        this.engine = engine;
        this.scheduler = scheduler;
        this.onStopped = onStopped;
        this.connections = new InboundConnections(settings, new ConnectRequestDecision(settings), this, scheduler);
    }

    ListenerSettings settings() {
        return settings;
    }

    List<Activation> activations() {
        return List.of(activations);
    }

    /**
     * Its state. LISTENING only while the engine still reads its CM events and the completions of its per-device
     * queue sets: when a registration failed (or the engine's loop ended) it reports WAITING_FOR_DEVICE with the
     * reason, and listens again (as after a device removal).
     */
    Activation.State state() {
        Registration seen;
        synchronized (this) {
            if (state != Activation.State.LISTENING) {
                return state;
            }
            seen = cmRegistration;
        }
        String lost = eventsNoLongerRead(seen); // outside the lock of 'this': it takes that of perDevice
        CmId lostId;
        Activation.State now;
        synchronized (this) {
            lostId = lost != null && state == Activation.State.LISTENING && cmRegistration == seen ? listenId : null;
            if (lostId != null) {
                state = Activation.State.WAITING_FOR_DEVICE;
                detail = "waiting: " + lost + "; listening again";
            }
            now = state;
        }
        if (lostId != null) {
            LOG.log(Level.WARNING, "RDMA listener on " + settings.address() + ":" + settings.port() + " for "
                + names() + ": " + lost + "; it listens again");
            try {
                scheduler.schedule(() -> relisten(lostId, lost + "; what the listener held is released"),
                    Duration.ZERO);
            } catch (RuntimeException e) { // the container's timer is gone: the runtime is closing
                LOG.log(Level.DEBUG, "cannot schedule listening again", e);
            }
        }
        return now;
    }

    String stateDetail() {
        state();
        synchronized (this) {
            return detail;
        }
    }

    /** Why the events of a listening listener are no longer read, or null while they are. */
    private String eventsNoLongerRead(Registration registration) {
        if (registration != null && !registration.isActive()) {
            Throwable failure = registration.failure();
            return "its CM events are no longer read (" + (failure == null ? "the RDMA event engine stopped"
                : "the registration failed: " + failure) + ")";
        }
        synchronized (perDevice) {
            for (DeviceQueueSet device : perDevice.values()) {
                if (!device.isReading()) {
                    return "the completions of its connections on device " + device.deviceName()
                        + " are no longer read";
                }
            }
        }
        return null;
    }

    int connectionCount() {
        return connections.size();
    }

    /** Admission: the limits and the rejections by reason. */
    ConnectRequestDecision decision() {
        return connections.decision();
    }

    synchronized boolean isStopped() {
        return stopped;
    }

    void add(Activation activation) {
        synchronized (activationsLock) {
            Activation[] now = Arrays.copyOf(activations, activations.length + 1);
            now[now.length - 1] = activation;
            activations = now;
        }
    }

    void remove(Activation activation) {
        boolean none;
        synchronized (activationsLock) {
            activations = Arrays.stream(activations).filter(a -> a != activation).toArray(Activation[]::new);
            none = activations.length == 0;
        }
        if (none) {
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
            if (state == Activation.State.GAVE_UP) {
                failures = 0; // a new activation on a listener that gave up: a fresh count of tries
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
                failures = 0;
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
        SetupRetry retry = settings.setupRetry();
        synchronized (this) {
            starting = false;
            if (stopped) {
                return;
            }
            failures++;
            Duration delay = retry.pauseAfter(failures);
            String reason = String.valueOf(cause.getMessage());
            boolean inUse = cause instanceof RdmaException e && e.errno() == Layout.EADDRINUSE;
            String where = "RDMA listener on " + settings.address() + ":" + settings.port() + " for " + names();
            if (delay == null) {
                state = Activation.State.GAVE_UP;
                detail = "gave up after " + failures + " tries (SetupAttempts " + retry.attempts() + "): " + reason
                    + "; retrySetup() in JMX, or redeploy, to try again";
                LOG.log(Level.ERROR, where + " gave up listening after " + failures + " tries (SetupAttempts "
                    + retry.attempts() + "): " + reason + "; it delivers nothing until it is retried (JMX "
                    + "retrySetup) or redeployed");
                return;
            }
            boolean changed = !detail.startsWith("waiting: " + reason);
            state = inUse ? Activation.State.ADDRESS_IN_USE : Activation.State.WAITING_FOR_DEVICE;
            detail = "waiting: " + reason + "; next try in " + (delay.toMillis() % 1000 == 0
                ? delay.toSeconds() + " s" : delay.toMillis() + " ms") + (retry.attempts() == 0 ? ""
                : " (" + failures + " of " + retry.attempts() + " tries failed)");
            LOG.log(changed ? Level.WARNING : Level.DEBUG, where + (inUse ? " cannot listen: another listener holds "
                + "the address and port: " : " is waiting for its device: ") + reason + "; retrying ("
                + retry.describe() + "; try " + failures + " failed)");
            cancelRetry = scheduler.schedule(this::retry, delay);
        }
    }

    /**
     * Tries to listen again at once after the listener gave up ({@link Activation.State#GAVE_UP}), with a fresh
     * count of tries; does nothing in any other state.
     *
     * @return whether a new try was started
     */
    boolean retrySetup() {
        synchronized (this) {
            if (stopped || state != Activation.State.GAVE_UP || starting) {
                return false;
            }
            failures = 0;
            starting = true;
            state = Activation.State.WAITING_FOR_DEVICE;
            detail = "retrying (asked through retrySetup)";
        }
        LOG.log(Level.INFO, "RDMA listener on " + settings.address() + ":" + settings.port() + " for " + names()
            + ": trying to listen again, as asked");
        tryStart();
        return true;
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
        return Arrays.stream(activations).map(Activation::name).toList().toString();
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
        synchronized (perDevice) {
            devicesReleased = true; // a CONNECT_REQUEST delivered from now on sets nothing up
        }
        int forced = connections.close(STOP_WAIT);
        if (forced > 0) {
            LOG.log(Level.INFO, forced + " connections of the listener on " + settings.address() + ":"
                + settings.port() + " did not finish their disconnect within " + STOP_WAIT.toMillis()
                + " ms; destroyed");
        }
        release(registration, channel);
        onStopped.accept(this);
        LOG.log(Level.INFO, "RDMA listener on " + settings.address() + ":" + settings.port() + " stopped");
    }

    /**
     * The listening id's device is gone (DEVICE_REMOVAL: rdma_get_cm_event(3) says to destroy the id), or its events
     * are no longer read ({@link #state()}): frees all it holds, so the kernel can finish a removal, and waits to
     * listen again. Runs off the delivery thread of the CM events, as it closes their registration.
     */
    private void relisten(CmId from, String reason) {
        Registration registration;
        EventChannel channel;
        synchronized (this) {
            if (stopped || listenId != from) {
                return;
            }
            registration = cmRegistration;
            channel = events;
            cmRegistration = null;
            events = null;
            listenId = null;
            starting = true; // no other start until this one is through
            state = Activation.State.WAITING_FOR_DEVICE;
            detail = "waiting: releasing what it holds (" + reason + ")";
        }
        try {
            release(registration, channel);
        } finally {
            waitAndRetry(new IllegalStateException(reason));
        }
    }

    /**
     * Frees the listener's resources on every device no connection uses (the next connection on a device that is
     * still there sets them up again): after a DEVICE_REMOVAL, and {@link #IDLE_RELEASE} after a device's last
     * connection went. The latter matters for a removal: a connection destroyed before its DEVICE_REMOVAL was read
     * never gets one (its id is gone), and a wildcard listening id gets none either, so without it the listener
     * would hold the removed device's context for ever.
     */
    private void releaseUnusedDevices() {
        List<DeviceQueueSet> unused = new ArrayList<>();
        synchronized (perDevice) {
            perDevice.values().removeIf(device -> device.routed() == 0 && unused.add(device));
        }
        unused.forEach(this::closeQuietly);
    }

    private void releaseUnusedDevicesLater() {
        try {
            scheduler.schedule(this::releaseUnusedDevices, IDLE_RELEASE);
        } catch (RuntimeException e) { // the container's timer is gone: the runtime is closing, which releases all
            LOG.log(Level.DEBUG, "cannot schedule the release of unused device resources", e);
        }
    }

    private void closeQuietly(DeviceQueueSet device) {
        try {
            device.close();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "closing the listener's resources on " + device.deviceName() + " failed", e);
        }
    }

    /** Closes the CM registration, destroys the connections, then frees the per-device resources and the channel. */
    private void release(Registration registration, EventChannel channel) {
        if (registration != null) {
            registration.close();
        }
        connections.connections().forEach(AcceptedConnection::destroy);
        List<DeviceQueueSet> all;
        synchronized (perDevice) {
            all = new ArrayList<>(perDevice.values());
            perDevice.clear();
        }
        all.forEach(this::closeQuietly);
        if (channel != null) {
            channel.close(); // destroys the listening id
        }
    }

    // ------------------------------------------------------------------ CM events

    private void onCmEvent(CmEvent event) {
        CmId id = event.id();
        if (event.type() == CmEventType.CONNECT_REQUEST) {
            connections.onConnectRequest(id, new CmWire(id, settings, this::setUp), event.privateData());
            return;
        }
        if (connections.onCmEvent(id, event.type(), event.status(), event.privateData())) {
            if (event.type() == CmEventType.DEVICE_REMOVAL) {
                // a wildcard listening id gets no DEVICE_REMOVAL: let go of the device with its last connection
                scheduler.schedule(this::releaseUnusedDevices, Duration.ZERO);
            }
            return;
        }
        if (event.type() == CmEventType.DEVICE_REMOVAL) {
            // the listening id's, or that of a connection already destroyed (after DISCONNECTED, say)
            scheduler.schedule(() -> {
                relisten(id, "its device was removed (DEVICE_REMOVAL); what the listener held on it is released");
                releaseUnusedDevices();
            }, Duration.ZERO);
        } else if (event.type() == CmEventType.ADDR_CHANGE) {
            LOG.log(Level.INFO, "RDMA listener on " + settings.address() + ":" + settings.port() + ": ADDR_CHANGE (the "
                + "network device of the address changed, e.g. a bonding failover); it keeps listening");
        }
    }

    /**
     * Sets a queue pair up on the queue set of {@code deviceName}, opened on first use with a CQ deep enough for
     * every connection the limits allow (each posts at most ReceiveBufferCount receives and as many sends).
     */
    private RcConnection setUp(String deviceName, Function<DeviceQueueSet, RcConnection> setUp) {
        synchronized (perDevice) { // a device's queue set is not released while a queue pair is set up on it
            if (devicesReleased) {
                throw new IllegalStateException("the listener on " + settings.address() + ":" + settings.port()
                    + " is stopping");
            }
            DeviceQueueSet device = perDevice.get(deviceName);
            if (device == null) {
                device = DeviceQueueSet.open(devices.acquire(deviceName, 1), DeviceLimits.Demand.of(settings), engine,
                    MAX_IN_FLIGHT);
                device.onIdle(this::releaseUnusedDevicesLater);
                perDevice.put(deviceName, device);
            }
            return setUp.apply(device);
        }
    }

    // ------------------------------------------------------------------ Deliveries

    @Override
    public void deliver(ConnectionEvent event, Done done) {
        Countdown countdown = new Countdown(done);
        for (Activation activation : activations) {
            if (activation.receivesCmEvents()) {
                countdown.add();
                activation.deliver(event, countdown::down);
            }
        }
        countdown.down();
    }

    @Override
    public void deliver(MessageCompletion completion, Done done) {
        Activation[] all = activations;
        Activation only = null;
        int receivers = 0;
        for (Activation activation : all) {
            if (activation.receivesCompletions()) {
                only = activation;
                receivers++;
            }
        }
        if (receivers == 1) { // the common case: one endpoint, nothing to count (one message, no objects of ours)
            only.deliver(completion, done);
            return;
        }
        Countdown countdown = new Countdown(done);
        for (Activation activation : all) {
            if (activation.receivesCompletions()) {
                countdown.add();
                activation.deliver(completion, countdown::down);
            }
        }
        countdown.down();
    }

    @Override
    public boolean hasDecider() {
        return Arrays.stream(activations).anyMatch(a -> a.receivesCmEvents() && a.isDeliveryActive());
    }

    /** Runs its task when every activation that was given an event is through with it (one count for the giver). */
    private static final class Countdown {
        private final AtomicInteger left = new AtomicInteger(1);
        private final Done done;

        Countdown(Done done) {
            this.done = done;
        }

        void add() {
            left.incrementAndGet();
        }

        void down() {
            if (left.decrementAndGet() == 0) {
                done.run();
            }
        }
    }
}
