package org.rdmaconnector.osgi.internal;

import java.lang.System.Logger.Level;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.rdmaconnector.connector.spi.DeviceRegistry;
import org.rdmaconnector.connector.spi.ListenerHub;
import org.rdmaconnector.connector.spi.Scheduler;
import org.rdmaconnector.verbs.engine.EventEngine;

/**
 * The bundle's one event engine (its loop thread, a small delivery pool), device registry, listener hub and timer,
 * shared by the factories and the whiteboard, so that no delivery logic is written twice.
 */
@Component(service = RdmaRuntime.class)
public class RdmaRuntime {
    private static final System.Logger LOG = System.getLogger(RdmaRuntime.class.getName());

    private ExecutorService delivery;
    private ScheduledExecutorService timer;
    private Scheduler scheduler;
    private EventEngine engine;
    private DeviceRegistry devices;
    private ListenerHub hub;

    @Activate
    void activate() {
        delivery = Executors.newFixedThreadPool(4, named("rdma-delivery"));
        timer = Executors.newSingleThreadScheduledExecutor(named("rdma-timer"));
        engine = new EventEngine(named("rdma-event-loop"), delivery);
        devices = new DeviceRegistry(engine);
        scheduler = (task, delay) -> {
            ScheduledFuture<?> future = timer.schedule(task, Math.max(1, delay.toMillis()), TimeUnit.MILLISECONDS);
            return () -> future.cancel(false);
        };
        hub = new ListenerHub(devices, engine, scheduler);
        LOG.log(Level.INFO, "RDMA runtime started");
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        hub.close();
        engine.close();
        devices.close();
        timer.shutdownNow();
        delivery.shutdown();
        if (!delivery.awaitTermination(10, TimeUnit.SECONDS)) {
            LOG.log(Level.WARNING, "RDMA deliveries still running 10 s after stop");
        }
        if (!timer.awaitTermination(10, TimeUnit.SECONDS)) {
            LOG.log(Level.WARNING, "an RDMA timer task still running 10 s after stop");
        }
        LOG.log(Level.INFO, "RDMA runtime stopped");
    }

    /** The engine (its registrations are the open channels). */
    public EventEngine engine() {
        return engine;
    }

    DeviceRegistry devices() {
        return devices;
    }

    /** The listener hub (its activations are the listeners). */
    public ListenerHub hub() {
        return hub;
    }

    Scheduler scheduler() {
        return scheduler;
    }

    private static ThreadFactory named(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
