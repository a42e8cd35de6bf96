package org.rdmaconnector.osgi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.lang.reflect.Proxy;
import java.util.Map;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.spi.DeliveryThreads;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.connector.spi.SetupRetry;
import org.rdmaconnector.verbs.engine.EventEngine;

/**
 * The runtime's configuration (PID org.rdmaconnector.runtime) on the host: the delivery pool's size and the
 * whiteboard's setup retry come from it, with defaults that fit the activations' own; and a pooled factory's
 * counters are in JMX under its PID.
 */
class RuntimeConfigurationTest {
    /** An instance of a DS configuration annotation: {@code values} by attribute, the defaults otherwise. */
    static <A> A config(Class<A> type, Map<String, Object> values) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
            (proxy, method, args) -> values.getOrDefault(method.getName(), method.getDefaultValue())));
    }

    private static int deliveryThreads(RdmaRuntime runtime) {
        return ((DeliveryThreads) runtime.engine().deliveryExecutor()).size();
    }

    @Test
    void theDefaultDeliveryPoolServesTwoEndpointsAtTheirDefaultConcurrencyAndTheRetryIsTheDefault() {
        RdmaRuntime runtime = new RdmaRuntime();
        runtime.activate(config(RdmaRuntime.Config.class, Map.of()));
        try {
            assertEquals(16, deliveryThreads(runtime));
            assertTrue(deliveryThreads(runtime) >= ListenerSettings.DEFAULT_MAX_CONCURRENT_DELIVERIES);
            assertEquals(SetupRetry.DEFAULTS, runtime.setupDefaults());
        } finally {
            runtime.deactivate();
        }
    }

    @Test
    void theConfigurationSizesThePoolAndSetsTheWhiteboardsSetupRetry() {
        RdmaRuntime runtime = new RdmaRuntime();
        runtime.activate(config(RdmaRuntime.Config.class, Map.of("deliveryThreads", 3, "setupIntervalMillis", 200,
            "setupAttempts", 5, "busyPollMicros", 20, "waiterHoldMicros", 0)));
        try {
            assertEquals(3, deliveryThreads(runtime));
            assertEquals(new SetupRetry(200, 30_000, 5), runtime.setupDefaults());
            assertEquals(java.time.Duration.ofNanos(20_000), runtime.engine().busyPoll());
            assertEquals(java.time.Duration.ZERO, runtime.engine().waiterHold(), "0 turns the hold off");
        } finally {
            runtime.deactivate();
        }
    }

    @Test
    void invalidValuesAreLoggedByNameAndTheDefaultsUsedInstead() {
        RdmaRuntime runtime = new RdmaRuntime();
        runtime.activate(config(RdmaRuntime.Config.class, Map.of("deliveryThreads", 0, "setupMaxIntervalMillis", 10,
            "busyPollMicros", -1, "waiterHoldMicros", 1_000_001)));
        try {
            assertEquals(RdmaRuntime.DEFAULT_DELIVERY_THREADS, deliveryThreads(runtime));
            assertEquals(SetupRetry.DEFAULTS, runtime.setupDefaults());
            assertEquals(EventEngine.DEFAULT_BUSY_POLL, runtime.engine().busyPoll());
            assertEquals(EventEngine.DEFAULT_WAITER_HOLD, runtime.engine().waiterHold());
        } finally {
            runtime.deactivate();
        }
    }

    @Test
    void theMetatypeDefaultsAreTheCodesDefaults() throws Exception {
        assertEquals(RdmaRuntime.DEFAULT_DELIVERY_THREADS,
            RdmaRuntime.Config.class.getMethod("deliveryThreads").getDefaultValue());
        assertEquals(EventEngine.DEFAULT_BUSY_POLL_MICROS,
            RdmaRuntime.Config.class.getMethod("busyPollMicros").getDefaultValue());
        assertEquals(EventEngine.DEFAULT_WAITER_HOLD_MICROS,
            RdmaRuntime.Config.class.getMethod("waiterHoldMicros").getDefaultValue());
        assertEquals(SetupRetry.DEFAULTS, new SetupRetry(
            (Integer) RdmaRuntime.Config.class.getMethod("setupIntervalMillis").getDefaultValue(),
            (Integer) RdmaRuntime.Config.class.getMethod("setupMaxIntervalMillis").getDefaultValue(),
            (Integer) RdmaRuntime.Config.class.getMethod("setupAttempts").getDefaultValue()));
    }

    @Test
    void aPooledFactorysCountersAreInJmxUnderItsPidUntilItIsDeactivated() throws Exception {
        RdmaRuntime runtime = new RdmaRuntime();
        runtime.activate(config(RdmaRuntime.Config.class, Map.of()));
        PooledConnectionFactory factory = new PooledConnectionFactory();
        Field reference = PooledConnectionFactory.class.getDeclaredField("runtime");
        reference.setAccessible(true);
        reference.set(factory, runtime);
        MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName("org.rdmaconnector:type=ConnectionPool,pid=\"org.rdmaconnector.connection.rxe0\"");
        try {
            factory.activate(config(PooledConnectionFactory.Config.class, Map.of("deviceName", "rxe0",
                "maxPoolSize", 4)), Map.of("service.pid", "org.rdmaconnector.connection.rxe0"));
            assertEquals("org.rdmaconnector.connection.rxe0", jmx.getAttribute(name, "Pid"));
            assertEquals(4, jmx.getAttribute(name, "MaxSize"));
            assertEquals(0, jmx.getAttribute(name, "Borrowed"));
            assertTrue(((String) jmx.getAttribute(name, "Status")).contains("waiting: "),
                "no device on the build host: " + jmx.getAttribute(name, "Status"));
            assertTrue(org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
                factory::getConnection).getMessage().contains("rxe0"));
            assertEquals(0L, jmx.getAttribute(name, "Borrows"), "a set that could not be opened was not lent");
            assertEquals(0L, jmx.getAttribute(name, "Opened"));
        } finally {
            factory.deactivate();
            runtime.deactivate();
        }
        assertFalse(jmx.isRegistered(name));
    }
}
