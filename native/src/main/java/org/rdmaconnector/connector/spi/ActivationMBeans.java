package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.lang.management.ManagementFactory;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Shows activations in JMX as {@code org.rdmaconnector:type=Activation,endpoint="...",listener="address:port"}
 * ({@link ActivationMXBean}), the same for MDBs on the resource adapter and whiteboard services in OSGi.
 */
public final class ActivationMBeans {
    private static final System.Logger LOG = System.getLogger(ActivationMBeans.class.getName());

    private ActivationMBeans() {
    }

    /** The name an activation is shown under. */
    public static ObjectName nameOf(Activation activation) throws JMException {
        return new ObjectName("org.rdmaconnector:type=Activation,endpoint=" + ObjectName.quote(activation.name())
            + ",listener=" + ObjectName.quote(activation.settings().address() + ":" + activation.settings().port()));
    }

    /**
     * Registers {@code activation} with the platform MBean server; null (logged) when it cannot, or when an
     * activation of the same endpoint on the same listener is shown already.
     */
    public static ObjectName register(Activation activation) {
        try {
            ObjectName name = nameOf(activation);
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            if (server.isRegistered(name)) {
                return null;
            }
            server.registerMBean(new View(activation), name);
            return name;
        } catch (JMException | RuntimeException e) {
            LOG.log(Level.WARNING, "cannot show " + activation + " in JMX", e);
            return null;
        }
    }

    /** Removes what {@link #register} showed; null is ignored. */
    public static void unregister(ObjectName name) {
        if (name != null) {
            try {
                ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
            } catch (JMException | RuntimeException e) {
                LOG.log(Level.DEBUG, "unregistering " + name + " failed", e);
            }
        }
    }

    /** The JMX view of one activation. */
    private record View(Activation activation) implements ActivationMXBean {
        @Override
        public String getEndpoint() {
            return activation.name();
        }

        @Override
        public String getListenAddress() {
            return activation.settings().address() + ":" + activation.settings().port();
        }

        @Override
        public String getState() {
            return activation.state().name();
        }

        @Override
        public String getStateDetail() {
            return activation.stateDetail();
        }

        @Override
        public long getDelivered() {
            return activation.delivered();
        }

        @Override
        public long getErrors() {
            return activation.errors();
        }

        @Override
        public long getUndeliverable() {
            return activation.undeliverable();
        }

        @Override
        public int getInFlight() {
            return activation.inFlight();
        }

        @Override
        public int getConnections() {
            return activation.connectionCount();
        }

        @Override
        public java.util.Map<String, Long> getRejections() {
            return activation.rejections();
        }
    }
}
