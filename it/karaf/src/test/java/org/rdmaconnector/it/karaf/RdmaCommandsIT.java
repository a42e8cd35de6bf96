package org.rdmaconnector.it.karaf;

import static org.junit.Assert.assertTrue;

import java.util.Dictionary;
import java.util.Hashtable;
import org.junit.Test;
import org.osgi.framework.ServiceRegistration;

/**
 * The rdma:* shell commands answer on this host (no RDMA in its kernel) with the expected text. Every command is
 * awaited: Karaf registers each one when its bundle's components start, and the shell may restart after the feature's
 * first install (see {@link KarafTestSupport#installRdmaFeature()}).
 */
public class RdmaCommandsIT extends KarafTestSupport {
    private static final String NO_DEVICES = "no RDMA devices: ibv_get_device_list failed: ENOSYS (38)";

    @Test
    public void devicesAndPortsSayWhyThereAreNone() throws Exception {
        String devices = awaitCommand("rdma:devices", "an answer", printed -> true);
        assertTrue(devices, devices.startsWith(NO_DEVICES + ": the kernel has no RDMA support"));
        String ports = awaitCommand("rdma:ports", "an answer", printed -> true);
        assertTrue(ports, ports.startsWith(NO_DEVICES));
    }

    @Test
    public void channelsAndListenersShowWhatIsOpen() throws Exception {
        String channels = awaitCommand("rdma:channels", "an answer", printed -> true);
        assertTrue(channels, channels.startsWith("no channel is open"));
        Dictionary<String, Object> properties = new Hashtable<>();
        properties.put("rdma.address", "10.0.0.1");
        properties.put("rdma.port", "7998");
        ServiceRegistration<?> registration = bundleContext.registerService(
            org.rdmaconnector.connector.CmEventListener.class.getName(),
            new OsgiServicesIT.Listeners().cmEventListener(), properties);
        try {
            // the whiteboard activates the service asynchronously: wait until the listener shows up
            String listeners = awaitCommand("rdma:listeners", "the listener on 10.0.0.1:7998",
                printed -> printed.contains("10.0.0.1:7998"));
            assertTrue(listeners, listeners.contains("10.0.0.1:7998 WAITING_FOR_DEVICE "));
            assertTrue(listeners, listeners.contains("delivered 0 errors 0 connections 0 (waiting: "
                + "rdma_create_event_channel failed: ENODEV (19): no RDMA device is present on this machine"));
        } finally {
            registration.unregister();
        }
        String after = awaitCommand("rdma:listeners", "no listener once the service is gone",
            printed -> !printed.contains("10.0.0.1:7998"));
        assertTrue(after, after.startsWith("no listener is active"));
    }

    @Test
    public void theFactoryConfigurationIsDescribedByMetatype() throws Exception {
        // config:meta may be missing for a moment after a feature install, and metatype reads a bundle when it starts
        String meta = awaitCommand("config:meta org.rdmaconnector.connection", "the factory's attributes",
            printed -> printed.contains("deviceName"));
        for (String attribute : new String[] {"deviceName", "portNumber", "cqDepth", "maxSendWr", "maxRecvWr",
            "minPoolSize", "maxPoolSize", "idleTimeoutSeconds", "borrowTimeoutMillis"}) {
            assertTrue(attribute + " is not described:\n" + meta, meta.contains(attribute));
        }
        assertTrue(meta, meta.contains("Device name, e.g. mlx5_0 or rxe0"));
    }
}
