package org.rdmaconnector.it.karaf;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.util.Dictionary;
import java.util.Hashtable;
import org.junit.Test;
import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * rdma-osgi in Karaf: a pooled connection factory service comes up from a Config Admin factory configuration, says
 * what is missing on this host (no RDMA device), follows a runtime update without a bundle restart, and goes with its
 * configuration; a whiteboard listener service is activated on the shared listener hub, which waits for the device.
 */
public class OsgiServicesIT extends KarafTestSupport {
    private static final String OSGI_BUNDLE = "org.rdmaconnector.osgi";
    private static final String FACTORY = "org.rdmaconnector.connector.RdmaConnectionFactory";

    @Test
    public void aFactoryComesFromConfigAdminFollowsUpdatesAndTellsWhatIsMissing() throws Exception {
        assertNotNull("bundle " + OSGI_BUNDLE + " is not installed", bundle(OSGI_BUNDLE));
        // right after the feature's first install Karaf may still be refreshing bundles
        Bundle bundle = awaitActive(OSGI_BUNDLE);
        long started = bundle.getLastModified();

        ConfigurationAdmin configAdmin = (ConfigurationAdmin) service(ConfigurationAdmin.class.getName(), null);
        Configuration configuration = configAdmin.createFactoryConfiguration("org.rdmaconnector.connection", "?");
        Dictionary<String, Object> properties = new Hashtable<>();
        properties.put("deviceName", "mlx5_0");
        properties.put("maxPoolSize", 2);
        configuration.update(properties);
        String filter = "(service.pid=" + configuration.getPid() + ")";

        // rdma types only inside method bodies: JUnit inspects signatures (lambdas' too) before the feature is in
        // the one factory type of both worlds (rdma-api), as an application sees it
        org.rdmaconnector.connector.RdmaConnectionFactory factory = (org.rdmaconnector.connector.RdmaConnectionFactory)
            await("the factory service", () -> service(FACTORY, "(&" + filter + "(maxPoolSize=2))"));
        org.rdmaconnector.connector.RdmaException e = assertThrows(org.rdmaconnector.connector.RdmaException.class,
            factory::getConnection);
        assertTrue(e.getMessage(), e.getMessage().startsWith("cannot open RDMA channels on device mlx5_0: "
            + "rdma_get_devices failed: "));
        assertEquals("ENODEV", e.errnoName());

        properties.put("maxPoolSize", 3);
        configuration.update(properties);
        await("the updated pool", () -> service(FACTORY, "(&" + filter + "(maxPoolSize=3))"));
        assertEquals("no bundle restart for an update", started, bundle(OSGI_BUNDLE).getLastModified());

        configuration.delete();
        await("the factory gone with its configuration", () -> service(FACTORY, filter) == null ? "gone" : null);
    }

    @Test
    public void aWhiteboardListenerIsActivatedAndWaitsForTheDevice() throws Exception {
        Dictionary<String, Object> properties = new Hashtable<>();
        properties.put("rdma.address", "10.0.0.1");
        properties.put("rdma.port", 7999);
        ServiceRegistration<?> registration = bundleContext.registerService(
            org.rdmaconnector.connector.CmEventListener.class.getName(), new Listeners().cmEventListener(),
            properties);
        javax.management.MBeanServer jmx = java.lang.management.ManagementFactory.getPlatformMBeanServer();
        javax.management.ObjectName pattern = new javax.management.ObjectName(
            "org.rdmaconnector:type=Activation,listener=\"10.0.0.1:7999\",*");
        try {
            javax.management.ObjectName shown = await("the activation in JMX", () -> {
                java.util.Set<javax.management.ObjectName> names = jmx.queryNames(pattern, null);
                return names.isEmpty() ? null : names.iterator().next();
            });
            assertEquals("WAITING_FOR_DEVICE", jmx.getAttribute(shown, "State"));
            String detail = (String) jmx.getAttribute(shown, "StateDetail");
            assertTrue(detail, detail.startsWith("waiting: rdma_create_event_channel failed: ENODEV (19)"));
        } finally {
            registration.unregister();
        }
        await("the activation gone with its service", () -> jmx.queryNames(pattern, null).isEmpty() ? "gone" : null);
    }

    /** Made only inside a test, after the feature is installed. */
    static final class Listeners {
        Object cmEventListener() {
            return (org.rdmaconnector.connector.CmEventListener) event -> { };
        }
    }

    private Object service(String type, String filter) {
        try {
            ServiceReference<?>[] references = bundleContext.getAllServiceReferences(type, filter);
            return references == null || references.length == 0 ? null
                : bundleContext.getService(references[0]);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
