package org.rdmaconnector.osgi.internal;

import java.lang.System.Logger.Level;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;
import javax.management.JMException;
import javax.management.ObjectName;
import org.osgi.framework.Constants;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.rdmaconnector.connector.Completion;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaConnectionFactory;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.spi.ActivationMBeans;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.Pool;
import org.rdmaconnector.connector.spi.PooledConnections;
import org.rdmaconnector.osgi.ConnectionPool;
import org.rdmaconnector.verbs.Rdma;
import org.rdmaconnector.verbs.RdmaErrors;

/**
 * One pooled connection factory per factory configuration of {@value ConnectionPool#FACTORY_PID}. A
 * configuration update replaces the pool (sets lent out finish on the old one); without a device the service still
 * registers and {@link #status()} says what is missing.
 */
// immediate: a configuration is checked (and a missing device logged) when it comes, not at the first borrower; and a
// look at the pool (rdma:pools) does not open and close it as a delayed component would be on get and unget
@Component(configurationPid = ConnectionPool.FACTORY_PID, configurationPolicy = ConfigurationPolicy.REQUIRE,
    service = {RdmaConnectionFactory.class, ConnectionPool.class}, immediate = true)
@Designate(ocd = PooledConnectionFactory.Config.class, factory = true)
public class PooledConnectionFactory implements RdmaConnectionFactory, ConnectionPool {
    private static final System.Logger LOG = System.getLogger(PooledConnectionFactory.class.getName());

    /** The configuration (metatype); the channel defaults are those of {@link ChannelSettings}. */
    @ObjectClassDefinition(name = "RDMA connection factory",
        description = "A pool of RDMA channel sets (CM event channel, completion channel and queue, PD) on one device")
    public @interface Config {
        @AttributeDefinition(description = "Device name, e.g. mlx5_0 or rxe0; empty for the first with port ACTIVE",
            required = false)
        String deviceName() default "";

        @AttributeDefinition(description = "Port number, from 1")
        int portNumber() default ChannelSettings.DEFAULT_PORT_NUMBER;

        @AttributeDefinition(description = "Completion queue entries per set (at least maxSendWr + maxRecvWr)")
        int cqDepth() default ChannelSettings.DEFAULT_CQ_DEPTH;

        @AttributeDefinition(description = "Completion vector")
        int completionVector() default ChannelSettings.DEFAULT_COMPLETION_VECTOR;

        @AttributeDefinition(description = "Send work requests per queue pair")
        int maxSendWr() default ChannelSettings.DEFAULT_MAX_SEND_WR;

        @AttributeDefinition(description = "Receive work requests per queue pair")
        int maxRecvWr() default ChannelSettings.DEFAULT_MAX_RECV_WR;

        @AttributeDefinition(description = "A message up to this many bytes is sent inline (IBV_SEND_INLINE); 0 never")
        int maxInlineData() default ChannelSettings.DEFAULT_MAX_INLINE_DATA;

        @AttributeDefinition(description = "Memory registered through one set, in bytes")
        long maxRegisteredBytes() default ChannelSettings.DEFAULT_MAX_REGISTERED_BYTES;

        @AttributeDefinition(description = "ACK timeout of the queue pairs, 4.096 us x 2^value before an "
            + "unacknowledged packet is sent again (0 to 31); 0 leaves the RDMA CM's choice")
        int ackTimeout() default ChannelSettings.DEFAULT_ACK_TIMEOUT;

        @AttributeDefinition(description = "What the endpoints' receiver-not-ready NAKs make the peer wait before it "
            + "sends again, in microseconds, rounded up to an RNR timer (10 to 655360); 0 leaves the RDMA CM's "
            + "655.36 ms")
        int minRnrTimerMicros() default ChannelSettings.DEFAULT_MIN_RNR_TIMER_MICROS;

        @AttributeDefinition(description = "Sets kept open when idle")
        int minPoolSize() default 0;

        @AttributeDefinition(description = "Sets at most")
        int maxPoolSize() default 16;

        @AttributeDefinition(description = "Seconds an idle set beyond the minimum stays open")
        long idleTimeoutSeconds() default 300;

        @AttributeDefinition(description = "Milliseconds getConnection waits when all sets are lent out")
        long borrowTimeoutMillis() default 5000;
    }

    @Reference
    private RdmaRuntime runtime;

    private volatile PooledConnections pool;
    private volatile String description;
    private ObjectName shown;

    @Activate
    void activate(Config config, Map<String, Object> properties) {
        configure(config);
        shown = showInJmx(String.valueOf(properties.get(Constants.SERVICE_PID)));
    }

    /** {@code org.rdmaconnector:type=ConnectionPool,pid="..."}; null (logged) when it cannot be shown. */
    private ObjectName showInJmx(String pid) {
        try {
            ObjectName name = new ObjectName("org.rdmaconnector:type=ConnectionPool,pid=" + ObjectName.quote(pid));
            ManagementFactory.getPlatformMBeanServer().registerMBean(new View(pid, this), name);
            return name;
        } catch (JMException | RuntimeException e) {
            LOG.log(Level.WARNING, "cannot show the RDMA connection factory " + pid + " in JMX", e);
            return null;
        }
    }

    @Modified
    void modified(Config config) {
        PooledConnections old = pool;
        configure(config);
        if (old != null) {
            old.close();
        }
    }

    private void configure(Config config) {
        ChannelSettings channels = new ChannelSettings(config.deviceName(), config.portNumber(), config.cqDepth(),
            config.completionVector(), config.maxSendWr(), config.maxRecvWr(), config.maxInlineData(),
            config.maxRegisteredBytes(), config.ackTimeout(), config.minRnrTimerMicros());
        Pool.Settings pooling = new Pool.Settings(config.minPoolSize(), config.maxPoolSize(),
            Duration.ofSeconds(config.idleTimeoutSeconds()), Duration.ofMillis(config.borrowTimeoutMillis()));
        pool = new PooledConnections(channels, pooling, runtime.devices(), runtime.engine(), runtime.scheduler());
        description = channels.deviceDescription() + ", pool " + pooling.minSize() + ".." + pooling.maxSize();
        String missing = missingDevice(channels);
        LOG.log(missing == null ? Level.INFO : Level.WARNING, "RDMA connection factory on " + description
            + (missing == null ? "" : ": " + missing));
    }

    /** Why no set can be opened now, or null when the device is there. */
    private static String missingDevice(ChannelSettings channels) {
        try {
            if (channels.deviceName() == null) {
                return Rdma.devices().isEmpty() ? RdmaErrors.NO_DEVICE : null;
            }
            Rdma.device(channels.deviceName());
            return null;
        } catch (RdmaException | LinkageError e) {
            return e.getMessage();
        }
    }

    @Deactivate
    void deactivate() {
        ActivationMBeans.unregister(shown);
        PooledConnections p = pool;
        if (p != null) {
            p.close();
        }
    }

    /** The settings of the pool's channel sets (device, port, queue sizes). */
    public ChannelSettings channelSettings() {
        return pool.channelSettings();
    }

    /** The pool's sizes and timeouts. */
    public Pool.Settings poolSettings() {
        return pool.poolSettings();
    }

    /** Why no set can be opened now (the device is missing, with the errno), or null when the device is there. */
    public String missingDevice() {
        return missingDevice(pool.channelSettings());
    }

    @Override
    public RdmaConnection getConnection() {
        return pool.getConnection();
    }

    @Override
    public Pool.Counters counters() {
        return pool.counters();
    }

    @Override
    public String status() {
        String missing = missingDevice(pool.channelSettings());
        return description + (missing == null ? ", device present" : ", waiting: " + missing) + ", " + counters();
    }

    /** The JMX view; it reads the pool of the current configuration. */
    private record View(String pid, PooledConnectionFactory factory) implements ConnectionPoolMXBean {
        @Override
        public String getPid() {
            return pid;
        }

        @Override
        public String getStatus() {
            return factory.status();
        }

        @Override
        public int getMinSize() {
            return factory.poolSettings().minSize();
        }

        @Override
        public int getMaxSize() {
            return factory.poolSettings().maxSize();
        }

        @Override
        public int getIdle() {
            return factory.counters().idle();
        }

        @Override
        public int getBorrowed() {
            return factory.counters().borrowed();
        }

        @Override
        public long getOpened() {
            return factory.counters().opened();
        }

        @Override
        public long getDestroyed() {
            return factory.counters().destroyed();
        }

        @Override
        public long getBorrows() {
            return factory.counters().borrows();
        }

        @Override
        public long getWaits() {
            return factory.counters().waits();
        }

        @Override
        public long getTimeouts() {
            return factory.counters().timeouts();
        }

        @Override
        public long getInvalid() {
            return factory.counters().invalid();
        }
    }
}
