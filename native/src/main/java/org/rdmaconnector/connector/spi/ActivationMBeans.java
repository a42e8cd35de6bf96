package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.lang.management.ManagementFactory;
import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Shows activations in JMX as {@code org.rdmaconnector:type=Activation,endpoint="...",listener="address:port"}
 * ({@link ActivationMXBean}), the same for MDBs on the resource adapter and whiteboard services in OSGi. A name is
 * never shared: a second activation of the same endpoint on the same listener (the same MDB class in two
 * applications, say) is shown with {@code ,instance=2} added, a third with {@code ,instance=3}, and so on.
 */
public final class ActivationMBeans {
    private static final System.Logger LOG = System.getLogger(ActivationMBeans.class.getName());

    private ActivationMBeans() {
    }

    /** The name an activation is shown under when it is the first of its endpoint on its listener. */
    public static ObjectName nameOf(Activation activation) throws JMException {
        return new ObjectName(baseName(activation));
    }

    private static String baseName(Activation activation) {
        return "org.rdmaconnector:type=Activation,endpoint=" + ObjectName.quote(activation.name())
            + ",listener=" + ObjectName.quote(activation.settings().address() + ":" + activation.settings().port());
    }

    /**
     * Registers {@code activation} with the platform MBean server under {@link #nameOf}, or with an
     * {@code instance} key when that name is taken; null (logged) when it cannot.
     */
    public static ObjectName register(Activation activation) {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            String base = baseName(activation);
            for (int instance = 1; ; instance++) {
                ObjectName name = new ObjectName(instance == 1 ? base : base + ",instance=" + instance);
                try {
                    server.registerMBean(new View(activation), name);
                    if (instance > 1) {
                        LOG.log(Level.INFO, "another activation of " + activation.name() + " on the same listener "
                            + "is shown in JMX already; this one is " + name);
                    }
                    return name;
                } catch (InstanceAlreadyExistsException taken) {
                    // the next instance number
                }
            }
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

        @Override
        public boolean isDeliveryActive() {
            return activation.isDeliveryActive();
        }

        @Override
        public int getHeld() {
            return activation.held();
        }

        @Override
        public boolean pauseDelivery() {
            return activation.pauseDelivery();
        }

        @Override
        public boolean resumeDelivery() {
            return activation.resumeDelivery();
        }

        @Override
        public boolean retrySetup() {
            return activation.retrySetup();
        }
    }
}
