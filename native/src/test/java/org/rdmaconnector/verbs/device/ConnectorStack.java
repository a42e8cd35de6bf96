package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.rdmaconnector.connector.spi.DeviceRegistry;
import org.rdmaconnector.connector.spi.ListenerHub;
import org.rdmaconnector.verbs.engine.EventEngine;

/**
 * The connector machinery as the resource adapter and the bundle run it, for device tests: a delivery pool, a timer,
 * the engine, the device registry and the listener hub; {@link #close()} stops them in that order's reverse.
 */
final class ConnectorStack implements AutoCloseable {
    final ExecutorService delivery = Executors.newFixedThreadPool(4);
    final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    final EventEngine engine = new EventEngine(r -> new Thread(r, "rdma-event-loop"), delivery);
    final DeviceRegistry devices = new DeviceRegistry(engine);
    final ListenerHub hub = new ListenerHub(devices, engine, (task, delay) -> {
        ScheduledFuture<?> f = timer.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
        return () -> f.cancel(false);
    });

    @Override
    public void close() throws InterruptedException {
        hub.close();
        devices.close();
        engine.close();
        delivery.shutdown();
        timer.shutdownNow();
        assertTrue(delivery.awaitTermination(10, TimeUnit.SECONDS), "the deliveries ended");
    }
}
