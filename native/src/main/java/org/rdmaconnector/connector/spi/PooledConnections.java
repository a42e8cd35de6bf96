package org.rdmaconnector.connector.spi;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.verbs.engine.EventEngine;

/**
 * A connection factory with its own pool of channel sets, for containers without a JCA pool (OSGi): each
 * {@link #getConnection()} lends a set as a {@link ConnectionHandle}; closing the handle cleans the set up and gives
 * it back; a set that is not {@link ChannelSet#isHealthy() healthy} (a fatal event of its device or port, its
 * events no longer read, something made through it that could not be freed, its device removed) is destroyed
 * instead of lent again: at once when it is idle, when it is given back when it is lent. Idle sets beyond the
 * minimum are closed after the idle timeout.
 */
public final class PooledConnections implements AutoCloseable {
    private final ChannelSettings channels;
    private final Pool<ChannelSet> pool;
    private final Scheduler scheduler;
    private volatile Runnable cancelEviction;
    private volatile boolean closed;

    /**
     * @throws IllegalArgumentException naming every invalid setting
     */
    public PooledConnections(ChannelSettings channels, Pool.Settings pooling, DeviceRegistry devices,
                             EventEngine engine, Scheduler scheduler) {
        this.channels = channels.validate();
        this.scheduler = scheduler;
        this.pool = new Pool<>(pooling, () -> open(devices, engine), ChannelSet::isHealthy, ChannelSet::cleanup,
            ChannelSet::close);
        scheduleEviction();
    }

    /**
     * A new set whose fatal events (its device removed, a DEVICE_FATAL or PORT_ERR) make the pool destroy it at once
     * if it is idle: on the scheduler, since the event may come on the event loop, which must not free anything.
     */
    private ChannelSet open(DeviceRegistry devices, EventEngine engine) {
        ChannelSet set = ChannelSet.open(channels, devices, engine);
        set.onFatalEvent(event -> {
            if (!closed) {
                try {
                    scheduler.schedule(pool::evictUnhealthy, Duration.ZERO);
                } catch (RejectedExecutionException e) {
                    // the runtime is stopping: the set is destroyed with the pool, or when next borrowed
                }
            }
        });
        return set;
    }

    /**
     * The longest wait between evictions: an idle timeout of centuries is allowed, but schedulers take the delay in
     * milliseconds (Duration.toMillis throws beyond Long.MAX_VALUE ms, java.util.Timer beyond the end of time).
     */
    private static final Duration MAX_EVICTION_PERIOD = Duration.ofHours(1);

    private void scheduleEviction() {
        Duration half = pool.settings().idleTimeout().dividedBy(2);
        Duration period = half.compareTo(MAX_EVICTION_PERIOD) > 0 ? MAX_EVICTION_PERIOD : half;
        cancelEviction = scheduler.schedule(() -> {
            if (!closed) {
                pool.evictIdle();
                scheduleEviction();
            }
        }, period.isZero() ? Duration.ofMillis(1) : period);
    }

    /** The channel settings of every set. */
    public ChannelSettings channelSettings() {
        return channels;
    }

    /** The pool's sizes and timeouts. */
    public Pool.Settings poolSettings() {
        return pool.settings();
    }

    /**
     * A handle on a pooled set.
     *
     * @throws org.rdmaconnector.connector.RdmaException when a set cannot be opened (the device named, the errno)
     * @throws IllegalStateException when all sets are in use past the borrow timeout, or the factory is closed
     */
    public RdmaConnection getConnection() {
        ChannelSet set = pool.borrow();
        return new ConnectionHandle(set, handle -> pool.giveBack(set));
    }

    /** What the pool holds and has done. */
    public Pool.Counters counters() {
        return pool.counters();
    }

    /** Closes the idle sets now and the borrowed ones when they come back. */
    @Override
    public void close() {
        closed = true;
        Runnable cancel = cancelEviction;
        if (cancel != null) {
            cancel.run();
        }
        pool.close();
    }
}
