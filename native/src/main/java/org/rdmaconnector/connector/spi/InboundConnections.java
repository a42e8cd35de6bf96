package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.rdmaconnector.connector.CmEventType;

/**
 * The connections of one listener, by CM id: admits each CONNECT_REQUEST through the {@link ConnectRequestDecision},
 * runs its {@link AcceptedConnection}, routes the later CM events of its id to it, and forgets it (freeing its slot)
 * when it is destroyed. After {@link #close()} every request is rejected and nothing is set up. Thread-safe.
 */
final class InboundConnections {
    private static final System.Logger LOG = System.getLogger(InboundConnections.class.getName());

    private final ListenerSettings settings;
    private final ConnectRequestDecision decision;
    private final Deliveries deliveries;
    private final Scheduler scheduler;
    private final Map<Object, AcceptedConnection> byId = new ConcurrentHashMap<>();
    private final AtomicLong numbers = new AtomicLong();
    private final LongSupplier clock;
    private volatile boolean closed;
    // guarded by this: the pending check of the liveness rule
    private Runnable cancelSweep;

    InboundConnections(ListenerSettings settings, ConnectRequestDecision decision, Deliveries deliveries,
                       Scheduler scheduler) {
        this(settings, decision, deliveries, scheduler, System::nanoTime);
    }

    /**
     * @param clock nanoseconds, as {@link System#nanoTime()} (host tests move it by hand)
     */
    InboundConnections(ListenerSettings settings, ConnectRequestDecision decision, Deliveries deliveries,
                       Scheduler scheduler, LongSupplier clock) {
        this.settings = settings;
        this.decision = decision;
        this.deliveries = deliveries;
        this.scheduler = scheduler;
        this.clock = clock;
    }

    /**
     * The liveness rule's check, every quarter of IdleTimeoutSeconds (at least every second) while connections are
     * held: runs on the scheduler's thread, never calls an endpoint (a reclaimed connection's DISCONNECTED is
     * delivered like any other CM event).
     */
    private void sweep() {
        synchronized (this) {
            cancelSweep = null;
        }
        long idleNanos = TimeUnit.SECONDS.toNanos(settings.idleTimeoutSeconds());
        for (AcceptedConnection connection : connections()) {
            connection.reclaimIfIdle(idleNanos);
        }
        scheduleSweep();
    }

    private void scheduleSweep() {
        if (settings.idleTimeoutSeconds() == 0) {
            return;
        }
        synchronized (this) {
            if (closed || cancelSweep != null || byId.isEmpty()) {
                return;
            }
            long period = Math.max(1000, TimeUnit.SECONDS.toMillis(settings.idleTimeoutSeconds()) / 4);
            cancelSweep = scheduler.schedule(this::sweep, Duration.ofMillis(period));
        }
    }

    ConnectRequestDecision decision() {
        return decision;
    }

    /**
     * A CONNECT_REQUEST: admitted (allowed peer, a free slot) and decided, or rejected with its reason.
     *
     * @param id the request's CM id: its later events are looked up by it
     */
    void onConnectRequest(Object id, ConnectionWire wire, byte[] privateData) {
        InetSocketAddress peerAddress = wire.peerAddress();
        InetAddress peer = peerAddress == null ? null : peerAddress.getAddress();
        ConnectRequestDecision.Reason refused;
        if (closed) {
            refused = ConnectRequestDecision.Reason.NO_RESOURCES;
            decision.rejected(refused);
        } else {
            refused = decision.admit(peer);
        }
        if (refused != null) {
            long count = decision.rejections(refused);
            // a flood of requests must not flood the log: the 1st, 2nd, 4th, 8th, ... of each reason at INFO
            LOG.log(Long.bitCount(count) == 1 ? Level.INFO : Level.DEBUG, "rejecting a connection request from "
                + peerAddress + " on " + settings.address() + ":" + settings.port() + ": " + describe(refused)
                + " (" + count + " rejected for this reason so far)");
            try {
                wire.reject(refused.privateData());
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "rdma_reject failed", e);
            } finally {
                wire.destroy();
            }
            return;
        }
        AcceptedConnection connection = new AcceptedConnection(numbers.incrementAndGet(), wire,
            settings.socketAddress(), deliveries, scheduler, done -> forget(id, done, peer), clock,
            settings.deliverSendCompletions());
        byId.put(id, connection);
        scheduleSweep();
        if (closed) { // close() may have looked at the table before this one was in it
            connection.rejectAndDestroy(ConnectRequestDecision.Reason.NO_RESOURCES.privateData());
            decision.rejected(ConnectRequestDecision.Reason.NO_RESOURCES);
            return;
        }
        ConnectRequestDecision.Reason rejected = connection.request(settings.acceptPolicy(), privateData);
        if (rejected != null) {
            decision.rejected(rejected);
        }
    }

    private void forget(Object id, AcceptedConnection destroyed, InetAddress peer) {
        if (byId.remove(id, destroyed)) {
            decision.release(peer);
        }
        synchronized (this) {
            notifyAll(); // close() may wait for the table to empty
        }
    }

    private String describe(ConnectRequestDecision.Reason reason) {
        return switch (reason) {
            case PEER_NOT_ALLOWED -> "the peer is not among the allowed peers " + settings.allowedPeers();
            case MAX_CONNECTIONS, MAX_CONNECTIONS_PER_PEER -> "the limit is reached (" + decision.describeLimits()
                + ")";
            case NOT_ACCEPTED -> "not accepted";
            case NO_RESOURCES -> "the listener is stopping";
        };
    }

    /**
     * A CM event of an accepted connection's id.
     *
     * @return false when no connection has that id (never accepted, or destroyed already)
     */
    boolean onCmEvent(Object id, CmEventType type, int status, byte[] privateData) {
        AcceptedConnection connection = byId.get(id);
        if (connection == null) {
            return false;
        }
        connection.onCmEvent(type, status, privateData);
        return true;
    }

    /** Connections held now (requested, accepted or disconnecting). */
    int size() {
        return byId.size();
    }

    /** The connections held now. */
    List<AcceptedConnection> connections() {
        return List.copyOf(byId.values());
    }

    /**
     * Rejects every later request, disconnects the connections, waits up to {@code grace} for them to go, then
     * destroys those left.
     *
     * @return the connections that had to be destroyed without a completed disconnect
     */
    int close(Duration grace) {
        Runnable sweep;
        synchronized (this) {
            closed = true;
            sweep = cancelSweep;
            cancelSweep = null;
        }
        if (sweep != null) {
            sweep.run();
        }
        for (AcceptedConnection connection : connections()) {
            connection.disconnect();
        }
        long deadline = System.nanoTime() + grace.toNanos();
        synchronized (this) {
            while (!byId.isEmpty() && System.nanoTime() < deadline) {
                try {
                    wait(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        List<AcceptedConnection> left = connections();
        left.forEach(AcceptedConnection::destroy);
        return left.size();
    }
}
