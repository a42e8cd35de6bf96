package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.rdmaconnector.connector.AcceptPolicy;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.InboundConnection;
import org.rdmaconnector.connector.MemoryRegion;
import org.rdmaconnector.connector.RemoteAccess;
import org.rdmaconnector.connector.RemoteRegion;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.verbs.PolledCompletion;
import org.rdmaconnector.verbs.jna.Layout;

/**
 * A connection a listener took a CONNECT_REQUEST for, from the decision to its destruction, as an explicit state
 * machine over its {@link ConnectionWire}:
 * <pre>
 * REQUESTED --accept--> ACCEPTING --ESTABLISHED--> ESTABLISHED --DISCONNECTED, our disconnect, a failed work
 *     |                     |                        request, the idle timeout--> DISCONNECTING --DISCONNECTED
 *     |                     |                        delivered and every request flushed (or a deadline)--> DESTROYED
 *     +--rejected-----------+--CONNECT_ERROR, REJECTED, UNREACHABLE, DEVICE_REMOVAL, destroy()--------------> DESTROYED
 * </pre>
 * The queue pair and its memory exist only from the accept decision on, and are freed at once on DESTROYED (a
 * {@link Deadline} bounds the wait for DISCONNECTED and the flushes, and is cleared by the destruction).
 * CM events arrive in order on one thread, completions in order on another; state changes happen under this
 * object's lock, and the wire and the endpoints are called outside it.
 */
final class AcceptedConnection implements InboundConnection, DeviceQueueSet.QueuePairRoute {
    private static final System.Logger LOG = System.getLogger(AcceptedConnection.class.getName());
    /**
     * How long a disconnecting connection waits for its DISCONNECTED (the peer's answer, or the CM's after its DREQ
     * timed out) and its flushes before it is destroyed anyway.
     */
    static final Duration DRAIN_DEADLINE = Duration.ofSeconds(60);
    /**
     * How long it waits for its flushes once DISCONNECTED is delivered. Short: destroying completes what is left as
     * flushed itself, and a receive re-posted just as the queue pair went to ERROR is never flushed by some kernels'
     * rxe (6.1): seen holding a connection's slot for the whole drain deadline under churn.
     */
    static final Duration FLUSH_GRACE = Duration.ofSeconds(2);
    /**
     * How long a connection whose peer was taken for dead (by the liveness rule, or by the transport's retries used
     * up) waits, once every request has flushed, for an answer to its DREQ. A dead peer never answers, and on RoCE the
     * CM's own DISCONNECTED (its DREQ retries used up) comes a minute or more later: without this the connection
     * would hold its slot, queue pair and memory for the whole drain deadline. A peer that is alive answers at once.
     * <p>
     * Not shorter: destroying an id whose DREQ is unanswered cancels the CM's resends of it, and a peer that was only
     * cut off for a moment (a cable, a switch) and only waits for messages (its sends were acknowledged) learns of the
     * disconnect from nothing else. The kernel's CM resends an unanswered DREQ of an accepted connection every 4.1 s
     * (the CM response timeout its peer's REQ carried, 2^20 x 4.096 us with the RDMA CM), so this wait lets it go out
     * five times (an outage of up to 16 s is still heard).
     */
    static final Duration ANSWER_WAIT = Duration.ofSeconds(20);
    private static final Runnable NOTHING = () -> { };
    // what runs after a completion's delivery, and the completions' side of the connection (Completions): made once
    private final Runnable afterCompletion = this::destroyIfOver;
    private final InboundCompletion.Owner completions = new Completions();

    /** Where the connection stands. */
    enum State {
        /** CONNECT_REQUEST taken, decision pending; no queue pair yet. */
        REQUESTED,
        /** Queue pair set up, receives posted, rdma_accept sent; it may send before ESTABLISHED is read. */
        ACCEPTING,
        /** ESTABLISHED read. */
        ESTABLISHED,
        /** Disconnect sent or answered; posted requests are flushing. */
        DISCONNECTING,
        /** Id, queue pair and memory freed. */
        DESTROYED
    }

    private final long number;
    private final ConnectionWire wire;
    private final InetSocketAddress listenAddress;
    private final Deliveries deliveries;
    private final Deadline deadline;
    private final Consumer<AcceptedConnection> onDestroyed;
    private final AtomicLong receives = new AtomicLong();
    private final AtomicLong sends = new AtomicLong();
    // ListenerSettings.deliverSendCompletions: false completes a successful send-queue request only where it is polled
    private final boolean deliversSendCompletions;
    // the liveness rule: when something last happened on the connection, and the deliveries running now
    private final LongSupplier clock;
    private final AtomicInteger delivering = new AtomicInteger();
    // deliveries a paused endpoint holds (given back from the delivery call before they were through)
    private final AtomicInteger held = new AtomicInteger();
    private volatile long lastActivity;
    // guarded by this
    private State state = State.REQUESTED;

    private boolean cmDisconnected;
    private boolean reclaimed;
    private boolean peerTakenForDead;
    private boolean answerWaitSet;
    private boolean slotReleased;

    /**
     * @param onDestroyed told once, when the connection is destroyed and none of its deliveries is held
     *     (its slot and table entry are freed there: a paused endpoint holds at most MaxConnections connections'
     *     events)
     */
    AcceptedConnection(long number, ConnectionWire wire, InetSocketAddress listenAddress, Deliveries deliveries,
                       Scheduler scheduler, Consumer<AcceptedConnection> onDestroyed) {
        this(number, wire, listenAddress, deliveries, scheduler, onDestroyed, System::nanoTime, true);
    }

    /**
     * @param clock nanoseconds, as {@link System#nanoTime()} (host tests move it by hand)
     * @param deliversSendCompletions {@link ListenerSettings#deliverSendCompletions()}
     */
    AcceptedConnection(long number, ConnectionWire wire, InetSocketAddress listenAddress, Deliveries deliveries,
                       Scheduler scheduler, Consumer<AcceptedConnection> onDestroyed, LongSupplier clock,
                       boolean deliversSendCompletions) {
        this.clock = clock;
        this.deliversSendCompletions = deliversSendCompletions;
        this.lastActivity = clock.getAsLong();
        this.number = number;
        this.wire = wire;
        this.listenAddress = listenAddress;
        this.deliveries = deliveries;
        this.deadline = new Deadline(scheduler);
        this.onDestroyed = onDestroyed;
    }

    synchronized State state() {
        return state;
    }

    // ------------------------------------------------------------------ the decision

    /**
     * Decides the CONNECT_REQUEST under {@code policy} and accepts or rejects it. Under ACCEPT the queue pair is set
     * up and accepted before the endpoints see the request; otherwise they see it first and nothing is allocated
     * unless it is accepted.
     *
     * @return null when accepted, else why it was rejected (the connection is destroyed then)
     */
    ConnectRequestDecision.Reason request(AcceptPolicy policy, byte[] privateData) {
        InboundEvent event = new InboundEvent(CmEventType.CONNECT_REQUEST, 0, privateData, this, listenAddress, policy,
            switch (policy) {
                case ACCEPT -> InboundEvent.Decision.ACCEPTED;
                case REJECT -> InboundEvent.Decision.REJECTED;
                case ENDPOINT_DECIDES -> InboundEvent.Decision.PENDING;
            });
        if (policy == AcceptPolicy.ACCEPT) {
            if (!setUpAndAccept()) {
                return ConnectRequestDecision.Reason.NO_RESOURCES;
            }
            delivering(event, NOTHING);
            return null;
        }
        if (event.isDecisionPending() && !deliveries.hasDecider()) {
            LOG.log(Level.WARNING, "accept policy endpoint-decides on " + listenAddress + ", and no CmEventListener "
                + "endpoint is active to decide (a paused one does not): rejecting " + wire.peerAddress());
        }
        // the endpoints delivering decide now; a paused one gets the request later, decided
        delivering(event, NOTHING);
        if (event.settle() == InboundEvent.Decision.REJECTED) {
            byte[] data = event.rejectData();
            rejectAndDestroy(data != null ? data : ConnectRequestDecision.Reason.NOT_ACCEPTED.privateData());
            return ConnectRequestDecision.Reason.NOT_ACCEPTED;
        }
        return setUpAndAccept() ? null : ConnectRequestDecision.Reason.NO_RESOURCES;
    }

    /** Queue pair, slots and receives first, then ACCEPTING (a receive may be answered at once), then rdma_accept. */
    private boolean setUpAndAccept() {
        boolean allocated = false;
        try {
            wire.allocate(this);
            allocated = true;
            synchronized (this) {
                if (state != State.REQUESTED) {
                    throw new IllegalStateException("the connection was destroyed while it was set up");
                }
                state = State.ACCEPTING;
            }
            wire.accept();
            return true;
        } catch (RuntimeException | Error e) {
            LOG.log(Level.WARNING, "cannot accept connection " + number + " from " + wire.peerAddress() + ": " + e);
            if (allocated) {
                destroy();
            } else {
                rejectAndDestroy(ConnectRequestDecision.Reason.NO_RESOURCES.privateData());
            }
            return false;
        }
    }

    /** rdma_reject with {@code privateData} (a failure is logged), then destroyed; for a request not accepted. */
    void rejectAndDestroy(byte[] privateData) {
        try {
            wire.reject(privateData);
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "rdma_reject of connection " + number + " failed", e);
        }
        destroy();
    }

    // ------------------------------------------------------------------ CM events after the decision

    /** A CM event of this connection's id, in the order the CM gave them. */
    void onCmEvent(CmEventType type, int status, byte[] privateData) {
        lastActivity = clock.getAsLong();
        int shown = status;
        if (type == CmEventType.DISCONNECTED) {
            synchronized (this) {
                if (cmDisconnected) {
                    return; // the deadline delivered it already, as timed out, and destroys the connection
                }
                cmDisconnected = true;
                if (reclaimed) {
                    shown = -Layout.ETIMEDOUT; // what the endpoints learn: taken for dead by the liveness rule
                }
            }
        }
        InboundEvent event = new InboundEvent(type, shown, privateData, this, listenAddress, AcceptPolicy.ACCEPT,
            InboundEvent.Decision.NONE);
        switch (type) {
            case ESTABLISHED -> {
                synchronized (this) {
                    if (state == State.ACCEPTING) {
                        state = State.ESTABLISHED;
                    }
                }
                delivering(event, NOTHING);
            }
            case DISCONNECTED -> {
                startDisconnect(); // the peer asked (DREQ): the answer (DREP); or our own request completed
                delivering(event, () -> {
                    if (!destroyIfOver()) { // held by a paused endpoint meanwhile: the drain deadline bounds it
                        shortenDeadline(FLUSH_GRACE);
                    }
                });
            }
            case TIMEWAIT_EXIT -> delivering(event, NOTHING);
            default -> { // CONNECT_ERROR, UNREACHABLE, REJECTED, DEVICE_REMOVAL, ...: the connection is over
                delivering(event, NOTHING);
                destroy();
            }
        }
    }

    // ------------------------------------------------------------------ completions

    /**
     * On the event loop, as the CQ is polled: completes the work request, so that an endpoint waiting for its own
     * send inside a delivery of this connection (which holds the connection's later deliveries) gets it. Without
     * {@link ListenerSettings#deliverSendCompletions()}, a successful completion of the connection's own send, WRITE
     * or READ ends here while the connection is open: it counts as activity, and nothing is delivered for it (a
     * closing connection's are delivered still, since each delivery looks whether the connection is over).
     */
    @Override
    public PostedRequest polled(PolledCompletion wc) {
        PostedRequest completed = wire.complete(wc);
        if (completed != null && !deliversSendCompletions && completed.kind() != WorkRequest.Kind.RECEIVE
            && completed.status() == Layout.IBV_WC_SUCCESS && isOpen()) {
            lastActivity = clock.getAsLong();
            return null;
        }
        return completed;
    }

    /** A work completion of this connection's queue pair (its request holds it), delivered in the CQ's order. */
    @Override
    public void delivered(PostedRequest request) {
        if (request == null) {
            return; // flushed by a destroy already
        }
        lastActivity = clock.getAsLong();
        boolean receive = request.kind() == WorkRequest.Kind.RECEIVE;
        int status = request.status();
        if (status == Layout.IBV_WC_RETRY_EXC_ERR) {
            synchronized (this) {
                peerTakenForDead = true; // the peer acknowledged nothing for the transport's whole retry budget
            }
        }
        if (status != Layout.IBV_WC_SUCCESS && startDisconnect() && status != Layout.IBV_WC_WR_FLUSH_ERR) {
            // the queue pair is in ERROR now and every posted request flushes; a status other than a flush is a
            // failure of the connection (a message larger than the buffer, a retry budget used up, a region the
            // peer may not access, ...)
            LOG.log(Level.WARNING, "connection " + number + " with " + wire.peerAddress() + " failed: "
                + request.kind() + " " + WorkCompletion.statusText(status) + "; disconnecting");
        }
        if (receive && status == Layout.IBV_WC_WR_FLUSH_ERR) { // a flushed receive is ours, not a message
            destroyIfOver();
            return;
        }
        long sequence = receive ? receives.incrementAndGet() : sends.incrementAndGet();
        // a message's bytes stay in its receive slot (the wire left them there), and its work completion in its
        // request, until the delivery is through; the completion is its delivery's Through too (one object per
        // completion delivered)
        InboundCompletion completion = new InboundCompletion(completions, request, sequence);
        handOver(null, completion, completion);
    }

    /** Delivers {@code event}, then runs {@code after}. */
    private void delivering(InboundEvent event, Runnable after) {
        handOver(event, null, new Through() {
            @Override
            void over(boolean wasHeld) {
                through(wasHeld, after, null);
            }
        });
    }

    /**
     * Hands {@code event} or {@code completion} to the deliveries, {@code through} telling when it is through. A
     * delivery call that throws ends the delivery all the same (a received message's receive is posted again, or its
     * slot freed). One that returns before the delivery is through leaves it held by a paused endpoint, which keeps
     * the connection's slot (see {@link #releaseSlotIfDone()}) until it is through.
     */
    private void handOver(InboundEvent event, InboundCompletion completion, Through through) {
        delivering.incrementAndGet();
        try {
            if (event != null) {
                deliveries.deliver(event, through);
            } else {
                deliveries.deliver(completion, through);
            }
        } catch (RuntimeException | Error e) {
            through.run();
            throw e;
        }
        if (through.returned()) {
            held.incrementAndGet();
            if (!through.counted()) { // a resumed endpoint ended it meanwhile, and its end did not count it off
                held.decrementAndGet();
                releaseSlotIfDone(); // which that end may have looked at while it was counted
            }
        }
    }

    /**
     * A delivery is through, once: {@link #repostReceive} for {@code received}, else {@code after}. While it was not
     * (running, or held by a paused endpoint) the connection did not count as idle.
     */
    private void through(boolean wasHeld, Runnable after, InboundCompletion received) {
        if (wasHeld) {
            held.decrementAndGet();
        }
        delivering.decrementAndGet();
        lastActivity = clock.getAsLong();
        try {
            if (received != null) {
                repostReceive(received);
            } else {
                after.run();
            }
        } finally {
            releaseSlotIfDone();
        }
    }

    /**
     * After a received message is through: the receive is posted again only now, so that while an endpoint is slow
     * (or paused) the peer meets receiver-not-ready (RC flow control holds it back) instead of our dropping what it
     * sends.
     */
    private void repostReceive(InboundCompletion received) {
        WorkRequest receive = received.message();
        if (isOpen()) {
            try {
                wire.repostReceive(receive);
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "re-posting a receive on connection " + number + " failed", e);
            }
        } else {
            wire.releaseReceive(receive);
        }
        destroyIfOver();
    }

    /** Where a delivered completion's message is read, and what its delivery's end does: made once. */
    private final class Completions implements InboundCompletion.Owner {
        @Override
        public InboundConnection connection() {
            return AcceptedConnection.this;
        }

        @Override
        public void read(WorkRequest receive, byte[] destination, int offset, int length) {
            wire.readReceived(receive, destination, offset, length);
        }

        @Override
        public void through(InboundCompletion completion, boolean wasHeld) {
            AcceptedConnection.this.through(wasHeld, afterCompletion, completion.message() != null ? completion : null);
        }
    }

    // ------------------------------------------------------------------ liveness

    /**
     * The liveness rule: an open connection with nothing (no completion, no CM event, no delivery running) for
     * {@code idleNanos} is taken for dead (RC has no keepalive, and a peer that crashed never says so). It is
     * disconnected; its DISCONNECTED (the peer's answer, or the CM's after its DREQ timed out) reaches the endpoints
     * with status -ETIMEDOUT, and it is destroyed once its requests have flushed (or at the drain deadline).
     *
     * @return whether it was reclaimed now
     */
    boolean reclaimIfIdle(long idleNanos) {
        long idle = clock.getAsLong() - lastActivity;
        synchronized (this) {
            if (!(state == State.ACCEPTING || state == State.ESTABLISHED) || delivering.get() > 0 || idle < idleNanos) {
                return false;
            }
            reclaimed = true;
            peerTakenForDead = true;
        }
        LOG.log(Level.WARNING, "connection " + number + " with " + wire.peerAddress() + " had no traffic for "
            + TimeUnit.NANOSECONDS.toSeconds(idle) + " s (IdleTimeoutSeconds): taken for dead, disconnecting");
        startDisconnect();
        destroyIfOver(); // nothing posted: no flush will come to start the wait for an answer
        return true;
    }

    private synchronized boolean isOpen() {
        return state == State.ACCEPTING || state == State.ESTABLISHED;
    }


    // ------------------------------------------------------------------ disconnect and destroy

    private synchronized boolean cmDisconnected() {
        return cmDisconnected;
    }

    /**
     * ACCEPTING or ESTABLISHED to DISCONNECTING, the drain deadline, and the one rdma_disconnect (the wire sends it
     * at most once). DISCONNECTED follows: the peer's answer, or the CM's own when the peer does not answer.
     *
     * @return whether this call made the change
     */
    private boolean startDisconnect() {
        synchronized (this) {
            if (state != State.ACCEPTING && state != State.ESTABLISHED) {
                return false;
            }
            state = State.DISCONNECTING;
        }
        deadline.set(DRAIN_DEADLINE, this::atDeadline);
        if (state() == State.DESTROYED) {
            deadline.clear(); // destroyed meanwhile: its clear may have come before this set
        }
        try {
            wire.disconnect();
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "rdma_disconnect of connection " + number + " failed", e);
        }
        return true;
    }

    /**
     * Destroyed once DISCONNECTED was delivered and every posted request has flushed (or at the deadline). A
     * connection whose peer was taken for dead waits only {@link #ANSWER_WAIT} for its DISCONNECTED once every
     * request has flushed.
     *
     * @return whether it is destroyed
     */
    private boolean destroyIfOver() {
        if (state() != State.DISCONNECTING) {
            return state() == State.DESTROYED;
        }
        boolean flushed = wire.outstanding() == 0; // while disconnecting nothing is posted: it only goes down
        boolean over;
        boolean unanswered;
        synchronized (this) {
            over = flushed && state == State.DISCONNECTING && cmDisconnected;
            unanswered = flushed && state == State.DISCONNECTING && !cmDisconnected && peerTakenForDead
                && !answerWaitSet;
            answerWaitSet |= unanswered;
        }
        if (over) {
            destroy();
        } else if (unanswered) {
            shortenDeadline(ANSWER_WAIT);
        }
        return state() == State.DESTROYED;
    }

    /** Replaces the pending deadline by one {@code after} from now. */
    private void shortenDeadline(Duration after) {
        if (state() == State.DISCONNECTING) {
            deadline.set(after, this::atDeadline);
            if (state() == State.DESTROYED) {
                deadline.clear(); // destroyed meanwhile: its clear may have come before this set
            }
        }
    }

    private void atDeadline() {
        boolean told;
        synchronized (this) {
            told = cmDisconnected;
            cmDisconnected = true;
        }
        int outstanding = wire.outstanding();
        LOG.log(Level.INFO, "connection " + number + " with " + wire.peerAddress() + (!told && outstanding == 0
            ? " had no answer to its disconnect; destroying it"
            : " still had " + outstanding + " requests posted at its deadline after the disconnect (" + (told
            ? "DISCONNECTED delivered" : "no DISCONNECTED yet") + "); destroying it, its requests complete as flushed"));
        if (!told) {
            // a dead peer never answers our DREQ, and on RoCE the CM's own DISCONNECTED (its DREQ retries used up)
            // comes later than the deadline: the endpoints still learn that the connection ended, as timed out
            InboundEvent event = new InboundEvent(CmEventType.DISCONNECTED, -Layout.ETIMEDOUT, null, this,
                listenAddress, AcceptPolicy.ACCEPT, InboundEvent.Decision.NONE);
            delivering(event, NOTHING);
        }
        destroy();
    }

    /**
     * Frees the id, queue pair and memory now (idempotent) and cancels the deadline; tells the owner now, or once its
     * last delivery is through.
     */
    void destroy() {
        synchronized (this) {
            if (state == State.DESTROYED) {
                return;
            }
            state = State.DESTROYED;
        }
        deadline.clear();
        try {
            wire.destroy();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "destroying connection " + number + " failed", e);
        } finally {
            releaseSlotIfDone();
        }
    }

    /**
     * Tells the owner once the connection is destroyed and no delivery of it is held by a paused endpoint: its slot
     * counts against MaxConnections until then, which bounds what a paused endpoint holds.
     */
    private void releaseSlotIfDone() {
        synchronized (this) {
            if (state != State.DESTROYED || held.get() > 0 || slotReleased) {
                return;
            }
            slotReleased = true;
        }
        onDestroyed.accept(this);
    }

    // ------------------------------------------------------------------ InboundConnection

    @Override
    public long number() {
        return number;
    }

    @Override
    public InetSocketAddress peerAddress() {
        return wire.peerAddress();
    }

    @Override
    public InetSocketAddress localAddress() {
        return wire.localAddress();
    }

    @Override
    public synchronized boolean isConnected() {
        return state == State.ESTABLISHED;
    }

    @Override
    public WorkRequest send(byte[] message, int offset, int length, boolean signaled) {
        requireOpen();
        return wire.send(message, offset, length, signaled);
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<RemoteAccess> remoteAccess) {
        requireOpen();
        return wire.register(buffer, remoteAccess);
    }

    @Override
    public WorkRequest write(MemoryRegion local, int offset, int length, RemoteRegion remote, int remoteOffset,
                             boolean signaled) {
        return post(RdmaOperation.write(local, offset, length, remote, remoteOffset, signaled));
    }

    @Override
    public WorkRequest writeWithImmediate(MemoryRegion local, int offset, int length, RemoteRegion remote,
                                          int remoteOffset, int immediateData, boolean signaled) {
        return post(RdmaOperation.writeWithImmediate(local, offset, length, remote, remoteOffset, immediateData,
            signaled));
    }

    @Override
    public WorkRequest read(MemoryRegion local, int offset, int length, RemoteRegion remote, int remoteOffset,
                            boolean signaled) {
        return post(RdmaOperation.read(local, offset, length, remote, remoteOffset, signaled));
    }

    private WorkRequest post(RdmaOperation operation) {
        requireOpen();
        return wire.post(operation);
    }

    /** It can post once accepted, before ESTABLISHED is read. */
    private void requireOpen() {
        if (!isOpen()) {
            throw new IllegalStateException("connection " + number + " with " + wire.peerAddress() + " is not "
                + "established (" + state() + ")");
        }
    }

    @Override
    public void disconnect() {
        startDisconnect();
    }

    @Override
    public String toString() {
        return "InboundConnection[" + number + ", peer " + wire.peerAddress() + ", " + state() + "]";
    }
}
