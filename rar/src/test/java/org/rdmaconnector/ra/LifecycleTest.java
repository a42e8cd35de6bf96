package org.rdmaconnector.ra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.resource.spi.endpoint.MessageEndpointFactory;
import jakarta.resource.spi.work.Work;
import java.lang.management.ManagementFactory;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.CmEventListener;
import org.rdmaconnector.connector.spi.DeviceRegistry;

/**
 * What an undeploy relies on, with test doubles of the container: the server releasing the event loop's Work ends
 * the loop (also when it releases it before the adapter has its engine), and a failure during stop still ends the
 * loop, closes the device contexts and removes the JMX views.
 */
@Timeout(60)
class LifecycleTest {
    private final FakeContainer container = new FakeContainer();
    private final RdmaResourceAdapter ra = new RdmaResourceAdapter();
    private final MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();

    private Thread loopThread() {
        assertEquals(1, container.started.size(), "one long-running Work: the event loop");
        return container.threads.get(0);
    }

    private Set<ObjectName> rdmaMBeans() throws Exception {
        return jmx.queryNames(new ObjectName("org.rdmaconnector:*"), null);
    }

    @Test
    void releasingTheLoopsWorkEndsTheLoopAndTheAdapterStillStopsCleanly() throws Exception {
        ra.start(container);
        Thread loop = loopThread();
        assertTrue(loop.isAlive());
        Work work = container.started.get(0);
        Thread server = new Thread(work::release, "server-releasing-work"); // another thread, as the spec says
        server.start();
        loop.join(10_000);
        assertFalse(loop.isAlive(), "the loop's Work returned after release()");
        server.join(10_000);
        assertFalse(server.isAlive(), "release() returned");
        ra.stop();
        assertEquals(Set.of(), rdmaMBeans(), "stop after a release leaves no MBean");
        work.release(); // a second release (after stop) is harmless
    }

    @Test
    void aReleaseBeforeTheAdapterHasItsEngineEndsTheLoopOnceItHasIt() throws Exception {
        container.releaseAtOnce = true; // startWork releases the Work as soon as it runs
        ra.start(container);
        Thread loop = loopThread();
        loop.join(10_000);
        assertFalse(loop.isAlive(), "the early release ended the loop");
        ra.stop();
        assertEquals(Set.of(), rdmaMBeans());
    }

    @Test
    void aFailureDuringStopStillEndsTheLoopClosesTheDevicesAndRemovesTheMBeans() throws Exception {
        ra.start(container);
        Thread loop = loopThread();
        RdmaActivationSpec spec = new RdmaActivationSpec();
        spec.setAddress("10.0.0.1");
        spec.setPort(7471);
        MessageEndpointFactory factory = FakeContainer.factory(CmEventListener.class, false,
            new FakeContainer.Endpoints(), args -> { });
        ra.endpointActivation(factory, spec);
        DeviceRegistry devices = ra.devices();
        assertEquals(2, rdmaMBeans().size(), "the engine and the activation: " + rdmaMBeans());
        container.timerCancelFailure = new IllegalStateException("the server's timer failed to cancel");

        ra.stop(); // does not throw: the failure is logged

        loop.join(10_000);
        assertFalse(loop.isAlive(), "the loop ended");
        IllegalStateException closed = assertThrows(IllegalStateException.class, () -> devices.acquire(null, 1));
        assertEquals("DeviceRegistry is closed", closed.getMessage());
        assertEquals(Set.of(), rdmaMBeans(), "no MBean left");
        assertThrows(IllegalStateException.class, ra::engine, "the adapter is stopped");
    }
}
