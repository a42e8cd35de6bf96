package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.verbs.TestProbes;

/** The composition root on the host: its engine in JMX (unique per runtime), and nothing left after close. */
class ConnectorRuntimeTest {
    private static boolean threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().startsWith(prefix));
    }

    @Test
    void twoRuntimesOfOneNameAreTwoEnginesInJmxAndCloseLeavesNoThreadOrMBean() throws Exception {
        MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        ConnectorRuntime first = ConnectorRuntime.standalone("rdma-rt-test", 2);
        ConnectorRuntime second = ConnectorRuntime.standalone("rdma-rt-test", 2);
        ObjectName a = first.jmxName();
        ObjectName b = second.jmxName();
        assertNotNull(a);
        assertNotEquals(a, b, "two deployments never share one name");
        assertEquals("Engine", a.getKeyProperty("type"));
        assertEquals(0, jmx.getAttribute(a, "Registrations"), "the engine's wake-up is not a registration; "
            + "the device registry registers nothing without a device, the hub nothing without a listener");
        assertEquals(0L, jmx.getAttribute(a, "LoopWaitTimeouts"));
        assertEquals(0L, jmx.getAttribute(a, "Refusals"));
        assertEquals("RUNNING", jmx.getAttribute(a, "LoopState"));
        assertEquals(null, jmx.getAttribute(a, "LoopFailure"));
        assertEquals(0L, jmx.getAttribute(a, "EventsRead"));
        assertEquals(0, ((String[]) jmx.getAttribute(a, "RegistrationDetails")).length);
        assertEquals(50L, jmx.getAttribute(a, "BusyPollMicros"));
        jmx.setAttribute(a, new javax.management.Attribute("BusyPollMicros", 0L));
        assertEquals(java.time.Duration.ZERO, first.engine().busyPoll(), "retuned at run time");
        javax.management.RuntimeMBeanException refused = org.junit.jupiter.api.Assertions.assertThrows(
            javax.management.RuntimeMBeanException.class,
            () -> jmx.setAttribute(a, new javax.management.Attribute("BusyPollMicros", 200_000L)));
        assertEquals("BusyPollMicros must be from 0 to 100000, was 200000", refused.getCause().getMessage());
        assertEquals(0L, jmx.getAttribute(a, "BusyPolls"));
        assertEquals(0L, jmx.getAttribute(a, "EventsReadByWaiters"));
        assertEquals(5000L, jmx.getAttribute(a, "WaiterHoldMicros"));
        jmx.setAttribute(a, new javax.management.Attribute("WaiterHoldMicros", 0L));
        assertEquals(java.time.Duration.ZERO, first.engine().waiterHold(), "retuned at run time");
        javax.management.RuntimeMBeanException tooLong = org.junit.jupiter.api.Assertions.assertThrows(
            javax.management.RuntimeMBeanException.class,
            () -> jmx.setAttribute(a, new javax.management.Attribute("WaiterHoldMicros", 1_000_001L)));
        assertEquals("WaiterHoldMicros must be from 0 to 1000000, was 1000001", tooLong.getCause().getMessage());
        assertTrue(threadsNamed("rdma-rt-test-event-loop"));
        first.engine().close();
        assertEquals("CLOSED", jmx.getAttribute(a, "LoopState"), "the loop's end shows before the runtime goes");
        first.close();
        first.close();
        second.close();
        assertFalse(jmx.isRegistered(a));
        assertFalse(jmx.isRegistered(b));
        TestProbes.await("no thread of the runtimes", java.time.Duration.ofSeconds(10),
            () -> !threadsNamed("rdma-rt-test"));
    }
}
