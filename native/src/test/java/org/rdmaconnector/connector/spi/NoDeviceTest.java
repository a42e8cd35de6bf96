package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.AcceptPolicy;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.TestProbes;
import org.rdmaconnector.verbs.engine.EventEngine;

/**
 * On the build host there is no RDMA device: opening a channel set fails with the device and errno named, and an
 * activation waits, retries on the scheduler, and stops cleanly.
 */
class NoDeviceTest {
    private ExecutorService delivery;
    private EventEngine engine;
    private DeviceRegistry devices;
    private final List<Duration> scheduled = new ArrayList<>();
    private final List<Runnable> tasks = new ArrayList<>();
    private int cancelled;

    private final Scheduler scheduler = (task, delay) -> {
        synchronized (tasks) {
            scheduled.add(delay);
            tasks.add(task);
        }
        return () -> cancelled++;
    };

    @BeforeEach
    void start() {
        delivery = Executors.newFixedThreadPool(2);
        engine = new EventEngine(Thread::new, delivery);
        devices = new DeviceRegistry(engine);
    }

    @AfterEach
    void stop() throws InterruptedException {
        devices.close();
        engine.close();
        delivery.shutdown();
    }

    @Test
    void openingAChannelSetNamesTheMissingDevice() throws Exception {
        Map<Integer, String> fds = TestProbes.openFdTargets();
        RdmaException e = assertThrows(RdmaException.class,
            () -> ChannelSet.open(new ChannelSettings("mlx5_0", 1, 256, 0, 64, 64, 0, 1 << 20), devices, engine));
        assertTrue(e.getMessage().startsWith("cannot open RDMA channels on device mlx5_0: rdma_get_devices failed: "),
            e.getMessage());
        assertEquals("rdma_get_devices", e.function());
        assertEquals("ENODEV", e.errnoName());
        assertTrue(e.getMessage().contains("[device mlx5_0]"), e.getMessage());
        RdmaException first = assertThrows(RdmaException.class,
            () -> ChannelSet.open(ChannelSettings.DEFAULTS, devices, engine));
        assertTrue(first.getMessage().startsWith("cannot open RDMA channels on the first device with port 1 ACTIVE: "
            + "ibv_get_device_list failed: ENOSYS (38): the kernel has no RDMA "
            + "support"), first.getMessage());
        assertEquals(Map.of(), TestProbes.fdsOpenedSince(fds), "a failed open must not leak file descriptors");
        assertEquals(List.of(), devices.openDevices());
    }

    @Test
    void anActivationWaitsRetriesWithBackoffAndStops() {
        ListenerHub hub = new ListenerHub(devices, engine, scheduler);
        Activation activation = hub.activate(ListenerSettings.of("10.0.0.1", 7471, null, null, null, null, null,
            null), new Sink("echo"));
        assertEquals(Activation.State.WAITING_FOR_DEVICE, activation.state());
        assertTrue(activation.stateDetail().startsWith("waiting: rdma_create_event_channel failed: ENODEV (19)"),
            activation.stateDetail());
        assertTrue(activation.stateDetail().endsWith("next try in 1 s"), activation.stateDetail());
        assertEquals(Map.of("PEER_NOT_ALLOWED", 0L, "MAX_CONNECTIONS", 0L, "MAX_CONNECTIONS_PER_PEER", 0L,
            "NOT_ACCEPTED", 0L, "NO_RESOURCES", 0L), activation.rejections(), "every reason is counted, from 0");
        for (int i = 0; i < 6; i++) {
            Runnable task;
            synchronized (tasks) {
                task = tasks.remove(0);
            }
            task.run();
        }
        assertEquals(List.of(1L, 2L, 4L, 8L, 16L, 30L, 30L), scheduled.stream().map(Duration::toSeconds).toList());
        assertEquals(Activation.State.WAITING_FOR_DEVICE, activation.state());
        Activation second = hub.activate(ListenerSettings.of("10.0.0.1", 7471, null, null, null, null, null, 2),
            new Sink("audit"));
        assertEquals(2, hub.activations().size());
        assertEquals(7, scheduled.size(), "a second activation on a waiting listener starts no second retry");
        IllegalArgumentException conflict = assertThrows(IllegalArgumentException.class, () -> hub.activate(
            ListenerSettings.of("10.0.0.1", 7471, null, "reject", null, null, null, null), new Sink("other")));
        assertTrue(conflict.getMessage().startsWith("endpoint other asks for backlog 16, policy reject"),
            conflict.getMessage());
        activation.close();
        assertEquals(Activation.State.STOPPED, activation.state());
        assertEquals(Activation.State.WAITING_FOR_DEVICE, second.state());
        assertEquals(0, cancelled);
        second.close();
        assertEquals(1, cancelled, "the last deactivation cancels the pending retry");
        assertEquals(List.of(), hub.activations());
        hub.close();
    }

    @Test
    void anActivationRetriesAsItsSetupSettingsSayGivesUpAfterItsAttemptsAndCanBeRetried() {
        ListenerHub hub = new ListenerHub(devices, engine, scheduler);
        Activation activation = hub.activate(ListenerSettings.builder().address("10.0.0.1").port(7474)
            .setupIntervalMillis(100).setupMaxIntervalMillis(250).setupAttempts(4).build(), new Sink("echo"));
        assertTrue(activation.stateDetail().endsWith("next try in 100 ms (1 of 4 tries failed)"),
            activation.stateDetail());
        assertFalse(activation.retrySetup(), "nothing to retry while it still tries");
        for (int i = 0; i < 3; i++) {
            Runnable task;
            synchronized (tasks) {
                task = tasks.remove(0);
            }
            task.run();
        }
        assertEquals(List.of(100L, 200L, 250L), scheduled.stream().map(Duration::toMillis).toList(),
            "doubling from SetupIntervalMillis up to SetupMaxIntervalMillis");
        assertEquals(Activation.State.GAVE_UP, activation.state());
        assertTrue(activation.stateDetail().startsWith("gave up after 4 tries (SetupAttempts 4): "
            + "rdma_create_event_channel failed: ENODEV (19)"), activation.stateDetail());
        synchronized (tasks) {
            assertEquals(List.of(), tasks, "no further try is scheduled");
        }
        assertTrue(activation.retrySetup(), "retried as asked");
        assertEquals(Activation.State.WAITING_FOR_DEVICE, activation.state());
        assertTrue(activation.stateDetail().endsWith("(1 of 4 tries failed)"), "a fresh count of tries: "
            + activation.stateDetail());
        activation.close();
        assertFalse(activation.retrySetup());
        hub.close();
    }

    @Test
    void twoActivationsOfOneEndpointOnOneListenerAreTwoMBeansThatPauseAndResumeEachItsOwn() throws Exception {
        javax.management.MBeanServer jmx = java.lang.management.ManagementFactory.getPlatformMBeanServer();
        ListenerHub hub = new ListenerHub(devices, engine, scheduler);
        ListenerSettings settings = ListenerSettings.builder().address("10.0.0.1").port(7475).deliveryActive(false)
            .build();
        Activation first = hub.activate(settings, new Sink("app.Echo"));
        Activation second = hub.activate(settings, new Sink("app.Echo")); // the same MDB in another application
        javax.management.ObjectName a = ActivationMBeans.register(first);
        javax.management.ObjectName b = ActivationMBeans.register(second);
        try {
            assertEquals(ActivationMBeans.nameOf(first), a);
            assertEquals(new javax.management.ObjectName(a + ",instance=2"), b, "never silently shared");
            assertEquals(false, jmx.getAttribute(a, "DeliveryActive"), "DeliveryActive=false starts paused");
            assertEquals(0, jmx.getAttribute(a, "Held"));
            assertEquals(true, jmx.invoke(a, "resumeDelivery", null, null));
            assertEquals(true, jmx.getAttribute(a, "DeliveryActive"));
            assertEquals(false, jmx.getAttribute(b, "DeliveryActive"), "each its own");
            assertEquals(false, jmx.invoke(a, "resumeDelivery", null, null), "delivering already");
            assertEquals(true, jmx.invoke(a, "pauseDelivery", null, null));
            assertEquals(false, jmx.getAttribute(a, "DeliveryActive"));
            assertEquals(false, jmx.invoke(a, "retrySetup", null, null), "it has not given up");
        } finally {
            ActivationMBeans.unregister(a);
            ActivationMBeans.unregister(b);
            hub.close();
        }
        assertFalse(jmx.isRegistered(a));
        assertFalse(jmx.isRegistered(b));
    }

    @Test
    void oneAddressWrittenTwoWaysIsOneListener() {
        ListenerHub hub = new ListenerHub(devices, engine, scheduler);
        Activation plain = hub.activate(ListenerSettings.of("10.0.0.1", 7472, null, null, null, null, null, null),
            new Sink("plain"));
        Activation mapped = hub.activate(ListenerSettings.of("::ffff:10.0.0.1", 7472, null, null, null, null, null,
            null), new Sink("mapped"));
        assertEquals(1, scheduled.size(), "one listener, one retry: the second activation joined the first");
        assertEquals(2, hub.activations().size());
        plain.close();
        mapped.close();
        hub.close();
    }

    @Test
    void aListenerWhoseCompletionQueueWouldBeTooDeepIsRefused() {
        ListenerSettings huge = new ListenerSettings("10.0.0.1", 7473, 16, AcceptPolicy.ACCEPT, null, 4096, 64, 1,
            65_535, 16);
        ListenerHub hub = new ListenerHub(devices, engine, scheduler);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> hub.activate(huge, new Sink("x")));
        assertTrue(e.getMessage().contains("MaxConnections x 2 x ReceiveBufferCount (65535 x 2 x 4096) must be at "
            + "most 4194304"), e.getMessage());
        hub.close();
    }

    @Test
    void invalidListenerSettingsAreRefusedAtActivation() {
        ListenerHub hub = new ListenerHub(devices, engine, scheduler);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> hub.activate(ListenerSettings.of("10.0.0.1", 70000, null, null, null, null, null, null),
                new Sink("x")));
        assertEquals("invalid RDMA listener settings: Port must be from 1 to 65535, was 70000", e.getMessage());
        hub.close();
    }

    private record Sink(String name) implements EndpointSink {
        @Override
        public boolean receivesCmEvents() {
            return true;
        }

        @Override
        public boolean receivesCompletions() {
            return true;
        }

        @Override
        public void deliver(ConnectionEvent event) {
        }

        @Override
        public void deliver(MessageCompletion completion) {
        }
    }
}
