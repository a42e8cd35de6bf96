package org.rdmaconnector.connector.spi;

import org.rdmaconnector.verbs.CompletionChannel;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.PolledCompletion;
import org.rdmaconnector.verbs.ProtectionDomain;
import org.rdmaconnector.verbs.engine.EventEngine;
import org.rdmaconnector.verbs.engine.EventSource;
import org.rdmaconnector.verbs.engine.OrderKey;
import org.rdmaconnector.verbs.engine.Registration;
import org.rdmaconnector.verbs.engine.Sources;

/**
 * The per-device queue set of a channel set or of a listener on one device: a lease on the shared device context, a
 * protection domain, a completion channel, one completion queue on it, and the engine's registration that reads it.
 * Each queue pair on the CQ is routed by its qp number to a {@link QueuePairRoute}. A work request completes as
 * soon as its completion is polled (by the event loop, by a thread awaiting a request, or by a delivery thread that
 * polls after its delivery), never behind a delivery: a listener that sends a reply and waits for that send's
 * completion inside its own delivery gets it. Built all or nothing; {@link #close()} frees it in the
 * reverse order (the registration before the CQ, the CQ before its channel, the PD, the lease).
 */
final class DeviceQueueSet implements AutoCloseable {
    private final DeviceRegistry.Lease lease;
    private final ProtectionDomain pd;
    private final CompletionChannel channel;
    private final CompletionQueue cq;
    private final Registration completions;
    // by qp number: looked up per completion with no boxed number (rxe's numbers pass 127 after a hundred QPs)
    private final LongTable<Route> byQp = new LongTable<>(16);
    private volatile Runnable onIdle;
    private final AutoCloseableStack opened;

    /** What one queue pair on the set does with its completions. */
    @FunctionalInterface
    interface QueuePairRoute {
        /**
         * On the thread that polls the completion (the loop, or one awaiting a request or delivering): completes its
         * work request. Fast, never blocks, calls no user code.
         *
         * @return the completed request to deliver, or null for nothing to deliver: it was completed already, or the
         *     route delivers no such completion
         */
        PostedRequest polled(PolledCompletion completion);

        /**
         * On a delivery thread, in the queue pair's order: only for sets that deliver ({@code maxInFlight > 0}).
         * {@code request} holds its work completion.
         */
        default void delivered(PostedRequest request) {
        }
    }

    /**
     * A queue pair's route as the engine's order key: the same object for the queue pair's life, so its completions
     * are delivered in order through one queue the key holds, made once (not one per event).
     */
    private static final class Route extends OrderKey {
        final QueuePairRoute route;

        Route(QueuePairRoute route) {
            this.route = route;
        }
    }

    private DeviceQueueSet(DeviceRegistry.Lease lease, DeviceLimits.Demand demand, EventEngine engine,
                           int maxInFlight, AutoCloseableStack opened) {
        this.opened = opened;
        this.lease = opened.push(lease);
        DeviceContext context = lease.context();
        SettingProblem.throwIfAny("RDMA settings do not fit device " + lease.deviceName(), DeviceLimits.problems(
            lease.deviceName(), context.query(), context.completionVectorCount(), demand));
        this.pd = opened.push(context.allocateProtectionDomain());
        this.channel = opened.push(context.createCompletionChannel());
        this.cq = opened.push(context.createCompletionQueue(Math.toIntExact(demand.cqDepth()), channel,
            demand.completionVector()));
        EventSource<PostedRequest> polled = Sources.completions(channel, Sources.DEFAULT_ACK_BATCH, new Router());
        this.completions = opened.push(maxInFlight > 0
            ? engine.register(polled, DeviceQueueSet::deliver, maxInFlight)
            : engine.registerOnLoop(polled, p -> p.deliveredBy(null))); // completed as polled: nothing to deliver
    }

    /**
     * On a delivery thread: hands the completion of {@code p} to its route. {@code p} holds its route only until then
     * (the engine has taken its order key): a request the application keeps keeps no connection's objects reachable.
     */
    private static void deliver(PostedRequest p) {
        Route route = (Route) p.deliveredBy();
        p.deliveredBy(null);
        route.route.delivered(p);
    }

    /**
     * Opens a set on {@code lease}'s device after checking {@code demand} against what the device allows; on failure
     * everything opened so far, the lease included, is closed.
     *
     * @param maxInFlight completions delivered to {@link QueuePairRoute#delivered} at most in flight (then the CQ is
     *     not read: backpressure); 0 for a set whose routes only complete requests (nothing is delivered)
     * @throws IllegalArgumentException naming each setting the device does not allow, its value and the limit
     */
    static DeviceQueueSet open(DeviceRegistry.Lease lease, DeviceLimits.Demand demand, EventEngine engine,
                               int maxInFlight) {
        AutoCloseableStack opened = new AutoCloseableStack();
        try {
            return new DeviceQueueSet(lease, demand, engine, maxInFlight, opened);
        } catch (RuntimeException | Error e) {
            opened.closeAll(e);
            throw e;
        }
    }

    DeviceRegistry.Lease lease() {
        return lease;
    }

    String deviceName() {
        return lease.deviceName();
    }

    DeviceContext context() {
        return lease.context();
    }

    ProtectionDomain protectionDomain() {
        return pd;
    }

    CompletionChannel completionChannel() {
        return channel;
    }

    CompletionQueue completionQueue() {
        return cq;
    }

    /** The engine's registration of the CQ's completions. */
    Registration completions() {
        return completions;
    }

    /**
     * Work completions the engine has polled from the CQ and passed on (one whose request was flushed by a close
     * already, whose queue pair is gone, or that its route does not deliver, is read and dropped, not counted).
     */
    long completionsRead() {
        return completions.eventsRead();
    }

    /** Whether the engine still reads the CQ's completions (its registration is active). */
    boolean isReading() {
        return completions.isActive();
    }

    /** Sends the completions of queue pair {@code qpNumber} to {@code route}. */
    void route(int qpNumber, QueuePairRoute route) {
        synchronized (byQp) {
            byQp.remove(qpNumber); // a number reused while its old route was still here starts afresh
            byQp.put(qpNumber, new Route(route));
        }
    }

    /** Stops routing {@code qpNumber}'s completions (its queue pair is destroyed; a reused number starts afresh). */
    void unroute(int qpNumber) {
        if (byQp.remove(qpNumber) != null && byQp.size() == 0) {
            Runnable idle = onIdle;
            if (idle != null) {
                idle.run();
            }
        }
    }

    /** Runs {@code idle} whenever the last routed queue pair is unrouted (on the thread that unroutes it). */
    void onIdle(Runnable idle) {
        this.onIdle = idle;
    }

    /** Queue pairs routed now. */
    int routed() {
        return byQp.size();
    }

    /**
     * Reads the CQ's completions in place, each completing its request as it is read (on the loop), then delivered
     * in order: the event is the request it completed, which holds its route and its work completion (no object per
     * completion). A completion that completes nothing (its queue pair destroyed, or its request flushed by a close
     * already), or whose route delivers none of its kind, is read and dropped.
     */
    private final class Router implements Sources.CompletionReader<PostedRequest> {
        @Override
        public PostedRequest read(PolledCompletion polled) {
            Route route = byQp.get(polled.qpNumber());
            PostedRequest request = route == null ? null : route.route.polled(polled);
            if (request != null) {
                request.deliveredBy(route);
            }
            return request;
        }

        @Override
        public Object orderKey(PostedRequest polled) {
            return polled.deliveredBy(); // one order per queue pair, as the CQ's own key (the qp number) says
        }
    }

    /** Frees the registration, CQ, channel, PD and the lease, newest first; the first failure is thrown. */
    @Override
    public void close() {
        byQp.clear();
        opened.closeAll(null);
    }
}
