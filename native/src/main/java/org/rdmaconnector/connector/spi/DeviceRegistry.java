package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.rdmaconnector.verbs.AsyncEvent;
import org.rdmaconnector.verbs.Device;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.Rdma;
import org.rdmaconnector.verbs.RdmaException;
import org.rdmaconnector.verbs.engine.EventEngine;
import org.rdmaconnector.verbs.engine.Registration;
import org.rdmaconnector.verbs.engine.Sources;
import org.rdmaconnector.verbs.jna.Layout;

/**
 * The device contexts of one connector instance, shared by reference count: the first {@link #acquire} of a device
 * opens its context and registers its async events with the engine; the last {@link Lease#close()} closes both.
 * Async events go to every lease of the device that subscribed. Thread-safe.
 */
public final class DeviceRegistry implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DeviceRegistry.class.getName());

    private final EventEngine engine;
    private final Map<String, Shared> shared = new HashMap<>();
    private boolean closed;

    /** A registry whose async events are read by {@code engine}. */
    public DeviceRegistry(EventEngine engine) {
        if (engine == null) {
            throw new IllegalArgumentException("engine must not be null");
        }
        this.engine = engine;
    }

    /**
     * A lease on the context of {@code deviceName}, or of the first device whose port {@code portNumber} is ACTIVE
     * when the name is null.
     *
     * @throws RdmaException ENODEV naming the device and what is present when it is missing
     */
    public synchronized Lease acquire(String deviceName, int portNumber) {
        if (closed) {
            throw new IllegalStateException("DeviceRegistry is closed");
        }
        String name = deviceName == null ? firstActive(portNumber) : deviceName;
        Shared entry = shared.get(name);
        if (entry == null) {
            entry = new Shared(name, DeviceContext.open(name));
            shared.put(name, entry);
            try {
                Shared opened = entry;
                entry.async = engine.register(Sources.asyncEvents(entry.context), opened::fanOut, 64);
            } catch (RuntimeException e) {
                shared.remove(name);
                entry.context.close();
                throw e;
            }
        }
        entry.references++;
        return new Lease(entry);
    }

    /** The names of the devices with a context open now. */
    public synchronized List<String> openDevices() {
        return new ArrayList<>(shared.keySet());
    }

    private static String firstActive(int portNumber) {
        List<Device> devices = Rdma.devices(); // ENOSYS: the kernel has no RDMA support
        if (devices.isEmpty()) {
            throw RdmaException.explained("ibv_get_device_list", Layout.ENODEV,
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
        throw RdmaException.explained("ibv_query_port", Layout.ENODEV, "no device has port " + portNumber
            + " ACTIVE: " + states);
    }

    private synchronized void release(Shared entry) {
        if (--entry.references == 0) {
            shared.remove(entry.name);
            entry.async.close();
            entry.context.close();
        }
    }

    /** Closes every context still leased (their dependents first). */
    @Override
    public synchronized void close() {
        closed = true;
        for (Shared entry : shared.values()) {
            entry.async.close();
            entry.context.close();
        }
        shared.clear();
    }

    private static final class Shared {
        final String name;
        final DeviceContext context;
        final List<Consumer<AsyncEvent>> subscribers = new CopyOnWriteArrayList<>();
        Registration async;
        int references;

        Shared(String name, DeviceContext context) {
            this.name = name;
            this.context = context;
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
            return entry.name;
        }

        /** Sends the device's async events to {@code consumer} (on a delivery thread) until the lease closes. */
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
            synchronized (DeviceRegistry.this) {
                if (released) {
                    return;
                }
                released = true;
                if (subscriber != null) {
                    entry.subscribers.remove(subscriber);
                }
                if (!closed) {
                    release(entry);
                }
            }
        }
    }
}
