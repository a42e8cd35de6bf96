package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.lang.management.ManagementFactory;
import javax.management.JMException;
import javax.management.ObjectName;
import org.rdmaconnector.verbs.engine.Registration;
import org.rdmaconnector.verbs.Rdma;
import org.rdmaconnector.verbs.engine.EventEngine;

/**
 * The composition root of the connector: one event engine, the shared device contexts ({@link DeviceRegistry}), the
 * listeners ({@link ListenerHub}) and the scheduler of their retries and deadlines, wired once and closed in one
 * order: the listeners (their connections and ids), then the engine (no delivery or ack races a closing queue after
 * it), then the device contexts, then the threads. The resource adapter builds it on the WorkManager's threads
 * ({@link #over}), the OSGi runtime and plain Java programs on threads of its own ({@link #standalone}).
 */
public final class ConnectorRuntime implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ConnectorRuntime.class.getName());
    private static final Duration THREADS_STOP = Duration.ofSeconds(10);
    private static final AtomicLong RUNTIMES = new AtomicLong();

    private final EventEngine engine;
    private final DeviceRegistry devices;
    private final ListenerHub hub;
    private final Scheduler scheduler;
    private final AutoCloseable threads;
    private final ObjectName jmxName;
    private final AtomicBoolean closed = new AtomicBoolean();

    private ConnectorRuntime(String name, EventEngine engine, Scheduler scheduler, AutoCloseable threads) {
        this.engine = engine;
        this.scheduler = scheduler;
        this.threads = threads;
        this.devices = new DeviceRegistry(engine, scheduler);
        this.hub = new ListenerHub(devices, engine, scheduler);
        this.jmxName = showInJmx(name, engine);
        // ENOMEM from pinning memory is the locked-memory limit in most cases: say at start what it is
        LOG.log(Level.INFO, "RDMA connector runtime " + name + " started; " + Rdma.lockedMemoryReport());
    }

    /** {@code org.rdmaconnector:type=Engine,name=NAME,id=N}: unique per runtime, so two deployments never share one. */
    private static ObjectName showInJmx(String name, EventEngine engine) {
        try {
            ObjectName objectName = new ObjectName("org.rdmaconnector:type=Engine,name=" + ObjectName.quote(name)
                + ",id=" + RUNTIMES.incrementAndGet());
            ManagementFactory.getPlatformMBeanServer().registerMBean(new EngineView(engine), objectName);
            return objectName;
        } catch (JMException | RuntimeException e) {
            LOG.log(Level.WARNING, "cannot show the RDMA engine " + name + " in JMX", e);
            return null;
        }
    }

    /** The name the engine is shown under in JMX, or null when it could not be registered. */
    public ObjectName jmxName() {
        return jmxName;
    }

    /**
     * A runtime over an engine whose threads the container gives (a resource adapter's WorkManager and timer).
     *
     * @param name shown in JMX ({@code org.rdmaconnector:type=Engine,name=...})
     * @param threads closed last, after the engine: the container's timer and the like
     */
    public static ConnectorRuntime over(String name, EventEngine engine, Scheduler scheduler, AutoCloseable threads) {
        if (name == null || engine == null || scheduler == null || threads == null) {
            throw new IllegalArgumentException("name, engine, scheduler and threads must not be null");
        }
        return new ConnectorRuntime(name, engine, scheduler, threads);
    }

    /**
     * A runtime with threads of its own: the event loop, {@code deliveryThreads} delivery threads and a timer, all
     * daemon threads named {@code <name>-event-loop}, {@code <name>-delivery-N}, {@code <name>-timer}.
     *
     * @param deliveryThreads from 1 to 256
     */
    public static ConnectorRuntime standalone(String name, int deliveryThreads) {
        if (deliveryThreads < 1 || deliveryThreads > 256) {
            throw new IllegalArgumentException("deliveryThreads must be from 1 to 256, was " + deliveryThreads);
        }
        DeliveryThreads delivery = new DeliveryThreads(named(name + "-delivery"), deliveryThreads);
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(named(name + "-timer"));
        AutoCloseable threads = () -> {
            timer.shutdownNow();
            delivery.shutdown();
            if (!delivery.awaitTermination(THREADS_STOP)) {
                LOG.log(Level.WARNING, "RDMA deliveries still running " + THREADS_STOP.toSeconds() + " s after stop");
            }
            if (!timer.awaitTermination(THREADS_STOP.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.log(Level.WARNING, "an RDMA timer task still running " + THREADS_STOP.toSeconds()
                    + " s after stop");
            }
        };
        EventEngine engine;
        try {
            engine = new EventEngine(named(name + "-event-loop"), delivery);
        } catch (RuntimeException | Error e) {
            timer.shutdownNow();
            delivery.shutdownNow();
            throw e;
        }
        Scheduler scheduler = (task, delay) -> {
            ScheduledFuture<?> future = timer.schedule(task, Math.max(1, delay.toMillis()), TimeUnit.MILLISECONDS);
            return () -> future.cancel(false);
        };
        return new ConnectorRuntime(name, engine, scheduler, threads);
    }

    private static ThreadFactory named(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * The busy-poll budget of {@code micros} microseconds, for the settings that give it in that unit (the resource
     * adapter's BusyPollMicros, the OSGi runtime's busyPollMicros, JMX).
     *
     * @throws IllegalArgumentException naming BusyPollMicros and its range
     */
    public static Duration busyPollOf(long micros) {
        return microsOf("BusyPollMicros", micros, EventEngine.MAX_BUSY_POLL);
    }

    /**
     * The waiter hold of {@code micros} microseconds, for the settings that give it in that unit (the resource
     * adapter's WaiterHoldMicros, the OSGi runtime's waiterHoldMicros, JMX).
     *
     * @throws IllegalArgumentException naming WaiterHoldMicros and its range
     */
    public static Duration waiterHoldOf(long micros) {
        return microsOf("WaiterHoldMicros", micros, EventEngine.MAX_WAITER_HOLD);
    }

    /** {@code micros} microseconds, refused with {@code name} unless from 0 to {@code max}. */
    private static Duration microsOf(String name, long micros, Duration max) {
        long maxMicros = max.toNanos() / 1000;
        if (micros < 0 || micros > maxMicros) {
            throw new IllegalArgumentException(name + " must be from 0 to " + maxMicros + ", was " + micros);
        }
        return Duration.ofNanos(micros * 1000);
    }

    /** The event engine (its registrations are the open channels). */
    public EventEngine engine() {
        return engine;
    }

    /** The shared device contexts. */
    public DeviceRegistry devices() {
        return devices;
    }

    /** The listeners of the activated endpoints. */
    public ListenerHub hub() {
        return hub;
    }

    /** Runs retries and deadlines. */
    public Scheduler scheduler() {
        return scheduler;
    }

    /** Stops the listeners, the engine, the device contexts, then the threads. Twice is a no-op. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        AutoCloseableStack stack = new AutoCloseableStack();
        stack.push(threads);
        stack.push(() -> ActivationMBeans.unregister(jmxName));
        stack.push(devices);
        stack.push(engine);
        stack.push(hub);
        stack.closeAll(null);
    }

    /** The JMX view of the engine. */
    private record EngineView(EventEngine engine) implements EngineMXBean {
        @Override
        public int getRegistrations() {
            return engine.registrations().size();
        }

        @Override
        public long getInFlight() {
            return engine.registrations().stream().mapToLong(Registration::inFlight).sum();
        }

        @Override
        public int getPaused() {
            return (int) engine.registrations().stream().filter(Registration::isPaused).count();
        }

        @Override
        public long getRefusals() {
            return engine.registrations().stream().mapToLong(Registration::refusals).sum();
        }

        @Override
        public long getLoopWaitTimeouts() {
            return engine.loopWaitTimeouts();
        }

        @Override
        public long getErrors() {
            return engine.registrations().stream().mapToLong(Registration::errors).sum();
        }

        @Override
        public String getLoopState() {
            return engine.loopState().name();
        }

        @Override
        public String getLoopFailure() {
            Throwable failure = engine.loopFailure();
            return failure == null ? null : failure.toString();
        }

        @Override
        public java.util.List<String> getRegistrationDetails() {
            return engine.registrations().stream().map(r -> r.name() + ": " + r.eventsRead() + " read, "
                + r.eventsDelivered() + " delivered, " + r.inFlight() + " in flight"
                + (r.busyPolls() > 0 ? ", " + r.busyPolls() + " busy polls" : "")
                + (r.eventsReadByWaiters() > 0 ? ", " + r.eventsReadByWaiters() + " read by waiters" : "")
                + (r.isPaused() ? ", paused" : "") + (r.isActive() ? "" : ", not read")).toList();
        }

        @Override
        public long getBusyPollMicros() {
            return engine.busyPoll().toNanos() / 1000;
        }

        @Override
        public void setBusyPollMicros(long micros) {
            engine.setBusyPoll(busyPollOf(micros));
        }

        @Override
        public long getWaiterHoldMicros() {
            return engine.waiterHold().toNanos() / 1000;
        }

        @Override
        public void setWaiterHoldMicros(long micros) {
            engine.setWaiterHold(waiterHoldOf(micros));
        }

        @Override
        public long getBusyPolls() {
            return engine.registrations().stream().mapToLong(Registration::busyPolls).sum();
        }

        @Override
        public long getEventsReadByWaiters() {
            return engine.registrations().stream().mapToLong(Registration::eventsReadByWaiters).sum();
        }

        @Override
        public long getEventsRead() {
            return engine.registrations().stream().mapToLong(Registration::eventsRead).sum();
        }

        @Override
        public long getEventsDelivered() {
            return engine.registrations().stream().mapToLong(Registration::eventsDelivered).sum();
        }
    }
}
