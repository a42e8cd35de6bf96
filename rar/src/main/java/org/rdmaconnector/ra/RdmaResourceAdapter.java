package org.rdmaconnector.ra;

import java.time.Duration;
import jakarta.resource.NotSupportedException;
import jakarta.resource.ResourceException;
import jakarta.resource.spi.ActivationSpec;
import jakarta.resource.spi.BootstrapContext;
import jakarta.resource.spi.ResourceAdapter;
import jakarta.resource.spi.ResourceAdapterInternalException;
import jakarta.resource.spi.endpoint.MessageEndpointFactory;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongFunction;
import javax.management.ObjectName;
import javax.transaction.xa.XAResource;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ActivationMBeans;
import org.rdmaconnector.connector.spi.ConnectorRuntime;
import org.rdmaconnector.connector.spi.DeviceRegistry;
import org.rdmaconnector.connector.spi.ListenerHub;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.connector.spi.SettingProblem;
import org.rdmaconnector.connector.spi.SetupRetry;
import org.rdmaconnector.verbs.engine.EventEngine;
import org.rdmaconnector.verbs.jna.Bindings;

/**
 * The RDMA resource adapter: one event engine (its loop as long-running Work, deliveries as Work on the server's
 * WorkManager), the shared device contexts, and the listeners of the activated endpoints. Each activation is shown
 * in JMX as {@code org.rdmaconnector:type=Activation,endpoint=...,listener=...} (see {@link ActivationMBeans}).
 * Deploys without a device: connections then fail with a clear ResourceException and activations wait.
 */
public class RdmaResourceAdapter implements ResourceAdapter {
    private static final System.Logger LOG = System.getLogger(RdmaResourceAdapter.class.getName());

    private final Map<Key, Registered> activations = new ConcurrentHashMap<>();
    // the adapter's setup retry, which each activation may override (null: ListenerSettings' default)
    private Integer setupIntervalMillis;
    private Integer setupMaxIntervalMillis;
    private Integer setupAttempts;
    // the engine's busy-poll budget in microseconds (null: EventEngine's default)
    private Integer busyPollMicros;
    // the engine's waiter hold in microseconds (null: EventEngine's default)
    private Integer waiterHoldMicros;
    private volatile WorkManagerExecutors executors;
    private volatile ConnectorRuntime runtime;
    // this instance holds the JNA bindings (Bindings.retain) from start to stop
    private final AtomicBoolean retained = new AtomicBoolean();

    // a class, not a record: on JDK 17 a record's equals and hashCode go through java.lang.runtime.ObjectMethods,
    // whose shared method handles cache their last adaptation (asTypeCache), with our class in it, for good; that
    // kept an undeployed rar's class loader
    private static final class Key {
        private final MessageEndpointFactory factory;
        private final ActivationSpec spec;

        Key(MessageEndpointFactory factory, ActivationSpec spec) {
            this.factory = factory;
            this.spec = spec;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.factory.equals(factory) && k.spec.equals(spec);
        }

        @Override
        public int hashCode() {
            return 31 * factory.hashCode() + spec.hashCode();
        }
    }

    private record Registered(Activation activation, ObjectName name) {
    }

    @Override
    public void start(BootstrapContext context) throws ResourceAdapterInternalException {
        List<SettingProblem> problems = new java.util.ArrayList<>(setupDefaults().problems());
        Duration busyPoll = micros("BusyPollMicros", ConnectorRuntime::busyPollOf, busyPollMicros,
            EventEngine.DEFAULT_BUSY_POLL, problems);
        Duration waiterHold = micros("WaiterHoldMicros", ConnectorRuntime::waiterHoldOf, waiterHoldMicros,
            EventEngine.DEFAULT_WAITER_HOLD, problems);
        if (!problems.isEmpty()) {
            throw new ResourceAdapterInternalException("invalid RDMA resource adapter settings: "
                + SettingProblem.join(problems));
        }
        if (!retained.get()) {
            try {
                Bindings.retain();
            } catch (LinkageError | RuntimeException e) {
                throw new ResourceAdapterInternalException("the RDMA resource adapter cannot bind rdma-core through "
                    + "JNA: " + e, e);
            }
            retained.set(true);
        }
        EventEngine engine;
        try {
            executors = new WorkManagerExecutors(context);
            engine = EventEngine.runningOn(executors.loopRunner(), executors.delivery(),
                WorkManagerExecutors.loopStartTimeout());
        } catch (RuntimeException | jakarta.resource.spi.UnavailableException e) {
            if (executors != null) {
                executors.close();
            }
            releaseBindings();
            throw new ResourceAdapterInternalException("the RDMA resource adapter cannot start its event loop: "
                + e.getMessage(), e);
        }
        engine.setBusyPoll(busyPoll);
        engine.setWaiterHold(waiterHold);
        WorkManagerExecutors e = executors;
        e.onLoopRelease(engine::close); // the server releasing the loop's Work ends the loop
        runtime = ConnectorRuntime.over("rdma-ra", engine, e.scheduler(), e::close);
        LOG.log(System.Logger.Level.INFO, "RDMA resource adapter started");
    }

    /** The engine setting {@code of(value)}; the default when unset; when refused, the default and a problem. */
    private static Duration micros(String name, LongFunction<Duration> of, Integer value, Duration byDefault,
                                   List<SettingProblem> problems) {
        try {
            return value == null ? byDefault : of.apply(value);
        } catch (IllegalArgumentException e) {
            problems.add(new SettingProblem(name, e.getMessage()));
            return byDefault;
        }
    }

    /**
     * Deactivates what is still active, then closes the runtime (listeners, the event loop, the device contexts, the
     * timer). A step that fails is logged and the rest still closes: a failing stop must not leave the loop's Work
     * running or a device open after the undeploy. Never throws.
     */
    @Override
    public void stop() {
        RuntimeException failure = null;
        try {
            for (Key key : activations.keySet()) {
                try {
                    deactivate(key);
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "deactivating an endpoint failed while the RDMA resource "
                        + "adapter stops; stopping the rest", e);
                    failure = e;
                }
            }
        } finally {
            ConnectorRuntime r = runtime;
            runtime = null;
            if (r != null) {
                try {
                    r.close(); // closes every part, also after one failed; then throws the first failure
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "a part of the RDMA resource adapter failed to close; "
                        + "the others are closed", e);
                    failure = failure == null ? e : failure;
                }
            }
        }
        releaseBindings(); // the last native resource is closed: let JNA, and with it our class loader, go
        LOG.log(System.Logger.Level.INFO, failure == null ? "RDMA resource adapter stopped"
            : "RDMA resource adapter stopped, with a failure: " + failure);
    }

    private void releaseBindings() {
        if (retained.compareAndSet(true, false)) {
            Bindings.release();
        }
    }

    EventEngine engine() {
        return started().engine();
    }

    private ConnectorRuntime started() {
        ConnectorRuntime r = runtime;
        if (r == null) {
            throw new IllegalStateException("the RDMA resource adapter is not started");
        }
        return r;
    }

    /**
     * Runs {@code task} as Work (a callback that may block must not run on the thread that delivers events).
     *
     * @throws java.util.concurrent.RejectedExecutionException if the WorkManager refused it
     */
    void later(Runnable task) {
        WorkManagerExecutors e = executors;
        if (e == null) {
            throw new IllegalStateException("the RDMA resource adapter is not started");
        }
        e.later(task);
    }

    DeviceRegistry devices() {
        return started().devices();
    }

    @Override
    public void endpointActivation(MessageEndpointFactory factory, ActivationSpec spec) throws ResourceException {
        if (!(spec instanceof RdmaActivationSpec rdmaSpec)) {
            throw new NotSupportedException("the RDMA resource adapter takes RdmaActivationSpec, got " + spec);
        }
        ConnectorRuntime r = runtime;
        if (r == null) {
            throw new ResourceException("the RDMA resource adapter is not started");
        }
        ListenerHub h = r.hub();
        Activation activation;
        try {
            activation = h.activate(rdmaSpec.settings(), new MessageEndpointSink(factory));
        } catch (IllegalArgumentException e) {
            throw new ResourceException(e.getMessage(), e);
        }
        activations.put(new Key(factory, spec), new Registered(activation, ActivationMBeans.register(activation)));
    }

    @Override
    public void endpointDeactivation(MessageEndpointFactory factory, ActivationSpec spec) {
        deactivate(new Key(factory, spec));
    }

    // Returns when the endpoint's deliveries have ended (Activation.close: bounded, logged if one hangs); the JMX
    // view goes also when the close fails
    private void deactivate(Key key) {
        Registered registered = activations.remove(key);
        if (registered != null) {
            try {
                registered.activation().close();
            } finally {
                ActivationMBeans.unregister(registered.name());
            }
        }
    }

    /** The setup retry of activations that do not set their own: this adapter's properties, else the defaults. */
    SetupRetry setupDefaults() {
        return SetupRetry.of(setupIntervalMillis, setupMaxIntervalMillis, setupAttempts, SetupRetry.DEFAULTS);
    }

    /**
     * The first pause, in ms, between an activation's tries to listen (no device yet, the address not on a device,
     * the port in use), doubled after each failed try (default {@value ListenerSettings#DEFAULT_SETUP_INTERVAL_MILLIS};
     * an activation's own SetupIntervalMillis wins).
     */
    public Integer getSetupIntervalMillis() {
        return setupIntervalMillis;
    }

    public void setSetupIntervalMillis(Integer setupIntervalMillis) {
        this.setupIntervalMillis = setupIntervalMillis;
    }

    /**
     * The longest pause, in ms, between an activation's tries to listen (default
     * {@value ListenerSettings#DEFAULT_SETUP_MAX_INTERVAL_MILLIS}; an activation's own wins).
     */
    public Integer getSetupMaxIntervalMillis() {
        return setupMaxIntervalMillis;
    }

    public void setSetupMaxIntervalMillis(Integer setupMaxIntervalMillis) {
        this.setupMaxIntervalMillis = setupMaxIntervalMillis;
    }

    /**
     * Tries to listen before an activation gives up and reports GAVE_UP (default
     * {@value ListenerSettings#DEFAULT_SETUP_ATTEMPTS}: for ever; an activation's own wins).
     */
    public Integer getSetupAttempts() {
        return setupAttempts;
    }

    public void setSetupAttempts(Integer setupAttempts) {
        this.setupAttempts = setupAttempts;
    }

    /**
     * The event loop's busy-poll budget in microseconds (default 50; 0 turns busy polling off; at most 100000): how
     * long the loop keeps polling a completion queue after its last work completion before it arms the queue and
     * sleeps. Under load, completions then need no wake-up each; the price is up to this much of the loop's CPU after
     * each burst. JMX changes it at run time ({@code org.rdmaconnector:type=Engine}, BusyPollMicros).
     */
    public Integer getBusyPollMicros() {
        return busyPollMicros;
    }

    public void setBusyPollMicros(Integer busyPollMicros) {
        this.busyPollMicros = busyPollMicros;
    }

    /**
     * The event loop's waiter hold in microseconds (default 5000; 0 turns it off; at most 1000000): how long the loop
     * leaves a completion queue unarmed after a thread last began awaiting a request on it, so that the threads read
     * their completions and none raises a CQ event. Completions nobody awaits are read once per hold meanwhile. JMX
     * changes it at run time ({@code org.rdmaconnector:type=Engine}, WaiterHoldMicros).
     */
    public Integer getWaiterHoldMicros() {
        return waiterHoldMicros;
    }

    public void setWaiterHoldMicros(Integer waiterHoldMicros) {
        this.waiterHoldMicros = waiterHoldMicros;
    }

    /** Not transactional: no XA resources. */
    @Override
    public XAResource[] getXAResources(ActivationSpec[] specs) {
        return null;
    }

    /** Equal when the configuration properties are (JCA 5.3.1: a JavaBean compared by its properties). */
    @Override
    public boolean equals(Object o) {
        return o instanceof RdmaResourceAdapter other && setupDefaults().equals(other.setupDefaults())
            && java.util.Objects.equals(busyPollMicros, other.busyPollMicros)
            && java.util.Objects.equals(waiterHoldMicros, other.waiterHoldMicros);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(setupDefaults(), busyPollMicros, waiterHoldMicros);
    }
}
