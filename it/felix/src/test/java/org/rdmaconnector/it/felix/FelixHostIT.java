package org.rdmaconnector.it.felix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;

/**
 * rdma-osgi in an embedded Felix on the host (no RDMA device), for what boots faster here than in Karaf: a service
 * registered as both listener types is activated and waits for the device, a changed port moves it, its
 * rdma.deliveryActive and rdma.setup* properties start it paused and make it give up (JMX), stopping the
 * bundle leaves no thread or MBean behind, and a start and stop of the bundle no file descriptor either; services on
 * one address must agree on rdma.deliverSendCompletions, read as text or boolean, and a value that is neither is
 * refused.
 */
class FelixHostIT {
    private static final MBeanServer JMX = ManagementFactory.getPlatformMBeanServer();

    @TempDir
    Path storage;

    @Test
    void aWhiteboardServiceFollowsItsPortAndAStartStopCycleLeavesNothing() throws Exception {
        Leaks leaks = new Leaks();
        try (FelixRig felix = FelixRig.start(storage)) {
            for (Bundle b : felix.context().getBundles()) {
                assertEquals(Bundle.ACTIVE, b.getState(), b.getSymbolicName() + " is not active");
            }
            long id = (Long) felix.probe("register", Map.of("properties",
                Map.of("rdma.address", "10.0.0.1", "rdma.port", 7991, "rdma.receiveBufferCount", 4)));
            ObjectName first = FelixRig.await("the activation on port 7991", () -> only(activations(7991)));
            assertTrue(WhiteboardOnRxeTest.isOfService(first, id), first + " names the service");
            assertEquals("WAITING_FOR_DEVICE", JMX.getAttribute(first, "State"));
            String detail = (String) JMX.getAttribute(first, "StateDetail");
            assertTrue(detail.startsWith("waiting: rdma_create_event_channel failed: ENODEV (19)"), detail);

            felix.probe("setProperties", Map.of("id", id, "properties",
                Map.of("rdma.address", "10.0.0.1", "rdma.port", 7992, "rdma.receiveBufferCount", 4)));
            FelixRig.await("the activation moved to port 7992", () -> only(activations(7992)));
            assertEquals(Set.of(), activations(7991), "the old port's activation is gone");

            // service properties as text, as a configuration file gives them: started paused, retried twice
            felix.probe("setProperties", Map.of("id", id, "properties", Map.of("rdma.address", "10.0.0.1",
                "rdma.port", 7992, "rdma.receiveBufferCount", 4, "rdma.deliveryActive", "false",
                "rdma.setupAttempts", "2", "rdma.setupIntervalMillis", "50")));
            ObjectName paused = FelixRig.await("the activation given up after 2 tries, paused", () -> {
                ObjectName name = only(activations(7992));
                return name != null && "GAVE_UP".equals(attribute(name, "State")) ? name : null;
            });
            assertEquals(false, JMX.getAttribute(paused, "DeliveryActive"));
            assertEquals(true, JMX.invoke(paused, "resumeDelivery", null, null));
            assertEquals(true, JMX.getAttribute(paused, "DeliveryActive"));

            Bundle osgi = felix.bundle(FelixRig.OSGI);
            assertEquals(List.of("rdma-event-loop-1"), leaks.newRdmaThreads().stream()
                .filter(n -> n.startsWith("rdma-event-loop")).toList(), "one engine loop while active");
            osgi.stop();
            assertEquals(Set.of(), activations(7992), "the activation is gone with the bundle");
            assertEquals(List.of(), leaks.rdmaThreadsLeft(), "rdma threads left after the bundle stopped");

            Leaks cycle = new Leaks();
            osgi.start();
            FelixRig.await("the echo service activated again", () -> only(activations(7992)));
            felix.probe("unregister", Map.of("id", id));
            assertEquals(Set.of(), activations(7992), "the activation is gone with its service");
            osgi.stop();
            assertEquals(List.of(), cycle.rdmaThreadsLeft(), "rdma threads left after a start and stop");
            assertEquals(Map.of(), cycle.newFds(), "file descriptors left open after a start and stop");
        }
        assertEquals(List.of(), leaks.rdmaThreadsLeft(), "rdma threads left after the framework stopped");
        assertEquals(Map.of(), leaks.newFds(), "file descriptors left open after the framework stopped");
    }

    @Test
    void rdmaDeliverSendCompletionsIsReadAsTextAndServicesOnOneAddressMustAgreeOnIt() throws Exception {
        try (FelixRig felix = FelixRig.start(storage)) {
            long quiet = (Long) felix.probe("register", Map.of("properties", Map.of("rdma.address", "10.0.0.1",
                "rdma.port", 7993, "rdma.receiveBufferCount", 4, "rdma.deliverSendCompletions", "false")));
            ObjectName first = FelixRig.await("the quiet service's activation", () -> only(activations(7993)));
            assertTrue(WhiteboardOnRxeTest.isOfService(first, quiet), first + " names the service");
            // the default (true) on the same address: refused, the listener's settings differ
            long other = (Long) felix.probe("register", Map.of("properties", Map.of("rdma.address", "10.0.0.1",
                "rdma.port", 7993, "rdma.receiveBufferCount", 4)));
            assertEquals(Set.of(first), activations(7993), "a service that disagrees is not activated");
            felix.probe("setProperties", Map.of("id", other, "properties", Map.of("rdma.address", "10.0.0.1",
                "rdma.port", 7993, "rdma.receiveBufferCount", 4, "rdma.deliverSendCompletions", false)));
            FelixRig.await("both activated once they agree", () -> activations(7993).size() == 2 ? true : null);
            // neither true nor false: refused, and the other service's activation stays
            felix.probe("setProperties", Map.of("id", other, "properties", Map.of("rdma.address", "10.0.0.1",
                "rdma.port", 7993, "rdma.receiveBufferCount", 4, "rdma.deliverSendCompletions", "sometimes")));
            FelixRig.await("the service with a bad value no longer activated",
                () -> activations(7993).equals(Set.of(first)) ? true : null);
        }
    }

    private static Set<ObjectName> activations(int port) {
        try {
            return JMX.queryNames(new ObjectName("org.rdmaconnector:type=Activation,listener=\"10.0.0.1:" + port
                + "\",*"), null);
        } catch (javax.management.MalformedObjectNameException e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static Object attribute(ObjectName name, String attribute) {
        try {
            return JMX.getAttribute(name, attribute);
        } catch (javax.management.InstanceNotFoundException e) {
            return null; // re-activated meanwhile
        } catch (javax.management.JMException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ObjectName only(Set<ObjectName> names) {
        if (names.size() > 1) {
            throw new AssertionError("more than one activation: " + names);
        }
        return names.isEmpty() ? null : names.iterator().next();
    }
}
