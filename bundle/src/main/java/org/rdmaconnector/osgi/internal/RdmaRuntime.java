package org.rdmaconnector.osgi.internal;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.function.LongFunction;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.rdmaconnector.connector.spi.ConnectorRuntime;
import org.rdmaconnector.connector.spi.DeviceRegistry;
import org.rdmaconnector.connector.spi.ListenerHub;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.connector.spi.Scheduler;
import org.rdmaconnector.connector.spi.SettingProblem;
import org.rdmaconnector.connector.spi.SetupRetry;
import org.rdmaconnector.verbs.engine.EventEngine;

/**
 * The bundle's one {@link ConnectorRuntime} (event engine with its loop thread and a delivery pool, device registry,
 * listener hub, timer), shared by the factories, the whiteboard and the shell commands. Configured by PID
 * {@value #PID} (optional): the delivery pool's size, the engine's busy-poll budget and the whiteboard's default setup
 * retry. A change of that
 * configuration restarts the runtime, and with it the listeners and pools.
 */
@Component(service = RdmaRuntime.class, configurationPid = RdmaRuntime.PID,
    configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = RdmaRuntime.Config.class)
public class RdmaRuntime {
    /** The configuration PID of the runtime. */
    public static final String PID = "org.rdmaconnector.runtime";
    /**
     * The default delivery threads: two endpoints' default MaxConcurrentDeliveries
     * ({@value ListenerSettings#DEFAULT_MAX_CONCURRENT_DELIVERIES} each), so one busy endpoint does not take every
     * thread.
     */
    public static final int DEFAULT_DELIVERY_THREADS = 2 * ListenerSettings.DEFAULT_MAX_CONCURRENT_DELIVERIES;
    private static final int MAX_DELIVERY_THREADS = 256;
    private static final System.Logger LOG = System.getLogger(RdmaRuntime.class.getName());

    /** The configuration (metatype). */
    @ObjectClassDefinition(name = "RDMA runtime",
        description = "The RDMA connector's threads and the defaults of its whiteboard listeners")
    public @interface Config {
        @AttributeDefinition(description = "Threads that deliver CM events and completions to whiteboard services "
            + "(1 to 256); each service takes at most its rdma.maxConcurrentDeliveries of them")
        int deliveryThreads() default DEFAULT_DELIVERY_THREADS;

        @AttributeDefinition(description = "First pause, in ms, between a listener's tries to listen while it "
            + "cannot (no device, address not on a device, port in use); doubled after each try. A service's "
            + "rdma.setupIntervalMillis wins")
        int setupIntervalMillis() default ListenerSettings.DEFAULT_SETUP_INTERVAL_MILLIS;

        @AttributeDefinition(description = "Longest pause, in ms, between a listener's tries to listen. A "
            + "service's rdma.setupMaxIntervalMillis wins")
        int setupMaxIntervalMillis() default ListenerSettings.DEFAULT_SETUP_MAX_INTERVAL_MILLIS;

        @AttributeDefinition(description = "Tries to listen before a listener gives up (GAVE_UP in JMX); 0 for "
            + "ever. A service's rdma.setupAttempts wins")
        int setupAttempts() default ListenerSettings.DEFAULT_SETUP_ATTEMPTS;

        @AttributeDefinition(description = "How long, in microseconds, the event loop keeps polling a completion "
            + "queue after its last work completion before it arms the queue and sleeps (busy polling); 0 turns it "
            + "off, at most 100000")
        int busyPollMicros() default EventEngine.DEFAULT_BUSY_POLL_MICROS;

        @AttributeDefinition(description = "How long, in microseconds, the event loop leaves a completion queue "
            + "unarmed after a thread last began awaiting a request on it (the waiter hold), so that the awaiting "
            + "threads read their completions; 0 turns it off, at most 1000000")
        int waiterHoldMicros() default EventEngine.DEFAULT_WAITER_HOLD_MICROS;
    }



    private ConnectorRuntime runtime;
    private SetupRetry setupDefaults = SetupRetry.DEFAULTS;

    @Activate
    void activate(Config config) {
        int threads = config.deliveryThreads();
        if (threads < 1 || threads > MAX_DELIVERY_THREADS) {
            LOG.log(Level.ERROR, "invalid " + PID + " configuration: deliveryThreads must be from 1 to "
                + MAX_DELIVERY_THREADS + ", was " + threads + "; using " + DEFAULT_DELIVERY_THREADS);
            threads = DEFAULT_DELIVERY_THREADS;
        }
        SetupRetry retry = new SetupRetry(config.setupIntervalMillis(), config.setupMaxIntervalMillis(),
            config.setupAttempts());
        List<SettingProblem> problems = retry.problems();
        if (problems.isEmpty()) {
            setupDefaults = retry;
        } else {
            LOG.log(Level.ERROR, "invalid " + PID + " configuration: " + SettingProblem.join(problems) + "; using "
                + SetupRetry.DEFAULTS.describe());
        }
        Duration busyPoll = micros(ConnectorRuntime::busyPollOf, config.busyPollMicros(),
            EventEngine.DEFAULT_BUSY_POLL);
        Duration waiterHold = micros(ConnectorRuntime::waiterHoldOf, config.waiterHoldMicros(),
            EventEngine.DEFAULT_WAITER_HOLD);
        runtime = ConnectorRuntime.standalone("rdma", threads);
        runtime.engine().setBusyPoll(busyPoll);
        runtime.engine().setWaiterHold(waiterHold);
        LOG.log(Level.INFO, "RDMA runtime started: " + threads + " delivery threads; busy polling "
            + busyPoll.toNanos() / 1000 + " us; waiter hold " + waiterHold.toNanos() / 1000
            + " us; listeners retry " + setupDefaults.describe()
            + " unless a service says otherwise");
    }

    /** The engine setting {@code of(value)}, or {@code fallback} after logging why {@code value} is refused. */
    private static Duration micros(LongFunction<Duration> of, int value, Duration fallback) {
        try {
            return of.apply(value);
        } catch (IllegalArgumentException e) {
            LOG.log(Level.ERROR, "invalid " + PID + " configuration: " + e.getMessage() + "; using "
                + fallback.toNanos() / 1000);
            return fallback;
        }
    }

    @Deactivate
    void deactivate() {
        runtime.close();
        LOG.log(Level.INFO, "RDMA runtime stopped");
    }

    /** The engine (its registrations are the open channels). */
    public EventEngine engine() {
        return runtime.engine();
    }

    DeviceRegistry devices() {
        return runtime.devices();
    }

    /** The listener hub (its activations are the listeners). */
    public ListenerHub hub() {
        return runtime.hub();
    }

    Scheduler scheduler() {
        return runtime.scheduler();
    }

    /** The setup retry of whiteboard services that do not set their own. */
    SetupRetry setupDefaults() {
        return setupDefaults;
    }
}
