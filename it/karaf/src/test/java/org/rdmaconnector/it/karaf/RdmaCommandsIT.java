package org.rdmaconnector.it.karaf;

import static org.junit.Assert.assertTrue;

import java.util.Dictionary;
import java.util.Hashtable;
import org.junit.Test;
import org.osgi.framework.ServiceRegistration;

/** The rdma:* shell commands answer on this host (no RDMA in its kernel) with the expected text. */
public class RdmaCommandsIT extends KarafTestSupport {
    @Test
    public void devicesAndPortsSayWhyThereAreNone() throws Exception {
        String devices = awaitCommand("rdma:devices");
        assertTrue(devices, devices.startsWith("no RDMA devices: ibv_get_device_list failed: ENOSYS (38): the kernel "
            + "has no RDMA support"));
        String ports = executeCommand("rdma:ports");
        assertTrue(ports, ports.startsWith("no RDMA devices: ibv_get_device_list failed: ENOSYS (38)"));
    }

    @Test
    public void channelsAndListenersShowWhatIsOpen() throws Exception {
        String channels = awaitCommand("rdma:channels");
        assertTrue(channels, channels.startsWith("no channel is open"));
        Dictionary<String, Object> properties = new Hashtable<>();
        properties.put("rdma.address", "10.0.0.1");
        properties.put("rdma.port", "7998");
        ServiceRegistration<?> registration = bundleContext.registerService(
            org.rdmaconnector.connector.CmEventListener.class.getName(),
            new OsgiServicesIT.Listeners().cmEventListener(), properties);
        try {
            String listeners = "";
            for (int i = 0; i < 100 && !listeners.contains("10.0.0.1:7998"); i++) {
                Thread.sleep(100);
                listeners = executeCommand("rdma:listeners");
            }
            assertTrue(listeners, listeners.contains("10.0.0.1:7998 WAITING_FOR_DEVICE "));
            assertTrue(listeners, listeners.contains("delivered 0 errors 0 connections 0 (waiting: "
                + "rdma_create_event_channel failed: ENODEV (19): no RDMA device is present on this machine"));
        } finally {
            registration.unregister();
        }
        String after = executeCommand("rdma:listeners");
        assertTrue(after, after.startsWith("no listener is active"));
    }

    @Test
    public void theFactoryConfigurationIsDescribedByMetatype() throws Exception {
        String meta = "";
        for (int i = 0; i < 100 && !meta.contains("deviceName"); i++) { // metatype reads the bundle when it starts
            meta = executeCommand("config:meta org.rdmaconnector.connection");
            Thread.sleep(i == 0 ? 0 : 100);
        }
        for (String attribute : new String[] {"deviceName", "portNumber", "cqDepth", "maxSendWr", "maxRecvWr",
            "minPoolSize", "maxPoolSize", "idleTimeoutSeconds", "borrowTimeoutMillis"}) {
            assertTrue(attribute + " is not described:\n" + meta, meta.contains(attribute));
        }
        assertTrue(meta, meta.contains("Device name, e.g. mlx5_0 or rxe0"));
    }

    /** The commands register when the shell sees the bundle, right after the feature's install: wait for them. */
    private String awaitCommand(String line) throws Exception {
        AssertionError last = null;
        for (int i = 0; i < 100; i++) {
            try {
                return executeCommand(line);
            } catch (AssertionError e) {
                last = e;
                Thread.sleep(100);
            }
        }
        throw last;
    }
}
