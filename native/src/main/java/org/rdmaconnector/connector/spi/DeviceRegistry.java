package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.AsyncEvent;
import org.rdmaconnector.verbs.AsyncEventType;
import org.rdmaconnector.verbs.Device;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.Rdma;
import org.rdmaconnector.verbs.RdmaErrors;
import org.rdmaconnector.verbs.engine.EventEngine;
import org.rdmaconnector.verbs.engine.Registration;
import org.rdmaconnector.verbs.engine.Sources;
import org.rdmaconnector.verbs.jna.Layout;

/**
 * The device contexts of one connector instance, shared by reference count and keyed by the device's identity
 * ({@link Device}: name, node GUID and the kernel's index of its registration): the first {@link #acquire} of a
 * device opens its context and registers its async events with the engine; the last {@link Lease#close()} closes
 * both. Async events go to every lease of the device that subscribed. Thread-safe.
 *
 * <p>A device that is removed and added again under the same name is a new device: its leases get a new context,
 * never the old one. The old device's context is closed when its last lease is; its subscribers are told of the
 * removal with a {@link AsyncEventType#DEVICE_FATAL} event (the kernel sends none for a removal), so that pooled
 * sets on it are destroyed instead of lent again. The registry notices a removal when a lease is taken on the name
 * again, when a lease of the device is closed, on {@link #checkDevices()}, and (given a scheduler) every
 * {@link #PRESENCE_CHECK} while a context is open: an idle pooled set alone would otherwise keep the device.
 */
public final class DeviceRegistry implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DeviceRegistry.class.getName());

    /** How often a registry with a scheduler looks for removed devices while it has a context open. */
    public static final Duration PRESENCE_CHECK = Duration.ofSeconds(5);

    private final EventEngine engine;
    private final Scheduler scheduler;
    private final Map<Device, Shared> shared = new LinkedHashMap<>();
    private boolean closed;
    private Runnable cancelPresenceCheck; // guarded by this

    /** A registry whose async events are read by {@code engine}, without periodic presence checks. */
    public DeviceRegistry(EventEngine engine) {
        this(engine, null);
    }

    /**
     * A registry whose async events are read by {@code engine} and that checks every {@link #PRESENCE_CHECK} on
     * {@code scheduler} whether its devices are still present (null: never).
     */
    public DeviceRegistry(EventEngine engine, Scheduler scheduler) {
        if (engine == null) {
            throw new IllegalArgumentException("engine must not be null");
        }
        this.engine = engine;
        this.scheduler = scheduler;
    }

    /**
     * A lease on the context of {@code deviceName}, or of the first device whose port {@code portNumber} is ACTIVE
     * when the name is null: of the device present under that name now.
     *
     * @throws RdmaException ENODEV naming the device and what is present when it is missing
     */
    public Lease acquire(String deviceName, int portNumber) {
        List<Shared> removed = new ArrayList<>();
        try {
            return acquire(deviceName, portNumber, removed);
        } finally {
            announceRemoval(removed);
        }
    }

    private synchronized Lease acquire(String deviceName, int portNumber, List<Shared> removed) {
        if (closed) {
            throw new IllegalStateException("DeviceRegistry is closed");
        }
        String name = deviceName == null ? firstActive(portNumber) : deviceName;
        DeviceContext opened = DeviceContext.open(name);
        Device device = opened.device();
        for (Shared other : shared.values()) { // one device per name at a time: others of the name are gone
            if (other.device.name().equals(name) && !other.device.equals(device) && other.markRemoved()) {
                removed.add(other);
            }
        }
        Shared entry = shared.get(device);
        if (entry != null) {
            opened.close(); // the shared context of this device is open already
        } else {
            entry = new Shared(opened);
            try {
                Shared created = entry;
                entry.async = engine.register(Sources.asyncEvents(opened), created::fanOut, 64);
            } catch (RuntimeException e) {
                opened.close();
                throw e;
            }
            shared.put(device, entry);
            schedulePresenceCheck();
        }
        entry.references++;
        return new Lease(entry);
    }

    /** The devices with a context open now; a removed one stays until its last lease is closed. */
    public synchronized List<Device> openDevices() {
        return new ArrayList<>(shared.keySet());
    }

    /**
     * Compares the devices with an open context against the ones the kernel lists now (ibv_get_device_list(3)); the
     * leases of each one that is gone get a {@link AsyncEventType#DEVICE_FATAL} event saying it was removed. For
     * callers that saw a sign of a removal ({@code DEVICE_REMOVAL} on a CM id).
     */
    public void checkDevices() {
        List<Shared> removed = new ArrayList<>();
        synchronized (this) {
            if (!closed && !shared.isEmpty()) {
                markMissing(removed);
            }
        }
        announceRemoval(removed);
    }

    private synchronized void schedulePresenceCheck() {
        if (scheduler == null || cancelPresenceCheck != null || closed) {
            return;
        }
        try {
            cancelPresenceCheck = scheduler.schedule(this::presenceCheck, PRESENCE_CHECK);
        } catch (RuntimeException e) { // the container's timer is gone: the runtime is closing
            LOG.log(Level.DEBUG, "cannot schedule the RDMA device presence check", e);
        }
    }

    private void presenceCheck() {
        synchronized (this) {
            cancelPresenceCheck = null;
        }
        try {
            checkDevices();
        } finally {
            synchronized (this) {
                if (!shared.isEmpty()) {
                    schedulePresenceCheck();
                }
            }
        }
    }

    private void markMissing(List<Shared> removed) {
        List<Device> present;
        try {
            present = Rdma.devices();
        } catch (RdmaException e) {
            present = List.of(); // ENODEV, ENOSYS: no device at all is present any more
        }
        for (Shared entry : shared.values()) {
            if (!present.contains(entry.device) && entry.markRemoved()) {
                removed.add(entry);
            }
        }
    }

    private static void announceRemoval(List<Shared> removed) {
        for (Shared entry : removed) {
            entry.fanOut(DeviceRemoval.unlisted(entry.device).asyncEvent());
        }
    }

    private static String firstActive(int portNumber) {
        List<Device> devices = Rdma.devices(); // ENOSYS: the kernel has no RDMA support
        if (devices.isEmpty()) {
            throw RdmaErrors.explained("ibv_get_device_list", Layout.ENODEV,
                "no RDMA device is present on this machine");
        }
        List<String> states = new ArrayList<>();
        for (Device device : devices) {
            try (DeviceContext context = DeviceContext.openVerbsOnly(device.name())) {
                if (portNumber <= context.query().physicalPortCount() && context.queryPort(portNumber).isActive()) {
                    return device.name();
                }
                states.add(device.name() + " (port " + portNumber + " not ACTIVE)");
            } catch (RdmaException e) {
                states.add(device.name() + " (" + e.errnoName() + ")");
            }
        }
        throw RdmaErrors.explained("ibv_query_port", Layout.ENODEV, "no device has port " + portNumber
            + " ACTIVE: " + states);
    }

    private void release(Shared entry, List<Shared> removed) {
        if (--entry.references == 0) {
            shared.remove(entry.device);
            entry.async.close();
            entry.context.close();
        } else if (!entry.removed) {
            // a listener lets go of a device when its id reports DEVICE_REMOVAL: a moment to check what is left
            markMissing(removed);
        }
    }

    /** Closes every context still leased (their dependents first). */
    @Override
    public synchronized void close() {
        closed = true;
        if (cancelPresenceCheck != null) {
            cancelPresenceCheck.run();
            cancelPresenceCheck = null;
        }
        for (Shared entry : shared.values()) {
            entry.async.close();
            entry.context.close();
        }
        shared.clear();
    }

    private static final class Shared {
        final Device device;
        final DeviceContext context;
        final List<Consumer<AsyncEvent>> subscribers = new CopyOnWriteArrayList<>();
        Registration async;
        int references;
        boolean removed; // guarded by the registry

        Shared(DeviceContext context) {
            this.device = context.device();
            this.context = context;
        }

        /** True the first time only. */
        boolean markRemoved() {
            if (removed) {
                return false;
            }
            removed = true;
            return true;
        }

        void fanOut(AsyncEvent event) {
            LOG.log(event.type().isFatal() ? Level.WARNING : Level.INFO, "RDMA async event: " + event);
            for (Consumer<AsyncEvent> subscriber : subscribers) {
                try {
                    subscriber.accept(event);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "async event subscriber failed on " + event, e);
                }
            }
        }
    }

    /** One user's share of a device context. Closing it twice is a no-op. */
    public final class Lease implements AutoCloseable {
        private final Shared entry;
        private Consumer<AsyncEvent> subscriber;
        private boolean released;

        private Lease(Shared entry) {
            this.entry = entry;
        }

        /** The shared context; do not close it (close the lease). */
        public DeviceContext context() {
            return entry.context;
        }

        /** The device name. */
        public String deviceName() {
            return entry.device.name();
        }

        /** The device (name, GUID, kernel index) of the context. */
        public Device device() {
            return entry.device;
        }

        /**
         * Sends the device's async events to {@code consumer} until the lease closes: on a delivery thread, and the
         * announcement of a removal on the thread that noticed it.
         */
        public void onAsyncEvent(Consumer<AsyncEvent> consumer) {
            synchronized (DeviceRegistry.this) {
                if (subscriber != null) {
                    entry.subscribers.remove(subscriber);
                }
                subscriber = consumer;
                entry.subscribers.add(consumer);
            }
        }

        @Override
        public void close() {
            List<Shared> removed = new ArrayList<>();
            synchronized (DeviceRegistry.this) {
                if (released) {
                    return;
                }
                released = true;
                if (subscriber != null) {
                    entry.subscribers.remove(subscriber);
                }
                if (!closed) {
                    release(entry, removed);
                }
            }
            announceRemoval(removed);
        }
    }
}
