package org.rdmaconnector.connector.spi;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.rdmaconnector.connector.Completion;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.verbs.PolledCompletion;
import org.rdmaconnector.verbs.engine.Registration;

/**
 * The connector's {@link WorkRequest}: made when a request is posted, completed or failed once by the connector (a
 * listener's receive posted again into its slot is the same object, started afresh: {@link #reposted}). Its
 * {@link Completion} is made when someone first asks for it, or awaits the request in flight: most requests (a
 * listener's receives posted again, its replies) are never waited on, an await that finds its request done consumes
 * the event without one, and a completion's lock would be allocated for each. A thread that awaits it reads its CQ
 * itself first, for up to the engine's busy-poll budget, where the loop only completes requests (a channel set's):
 * the completion then needs no hand-off from the loop to the waiting thread.
 */
final class PostedRequest implements WorkRequest, BooleanSupplier {
    // set again only when a listener's receive is posted again into its slot (reposted): read by the threads the
    // request is handed to through the posted table's lock, or the engine's hand-off
    private long wrId;
    private final Kind kind;
    // the registration of its CQ, which an awaiting thread polls first (Registration.pollUntil); null: none
    private final Registration completions;
    private final int slot;
    private final boolean signaled;
    // made on the first ask; guarded by this (set, and read by complete, under the lock that sets the result)
    private volatile Completion completion;
    // guarded by this: await consumed the one event of a request done before anyone made its completion, so a
    // completion made later starts without it
    private boolean consumed;
    // its work completion's fields, set (under this) before done: no WorkCompletion per completion polled; the
    // record is made when someone asks for it (result()), and kept
    private int status;
    private WcOpcode opcode;
    private int vendorError;
    private int byteLength;
    private int immediateData;
    private int qpNumber;
    private int sourceQp;
    private int flags;
    private WorkCompletion result;
    private volatile boolean done;
    private volatile byte[] data;
    private volatile RdmaException failure;
    // the order key its completion is delivered under (its queue pair's route), set by the thread that polls it and
    // read by the delivery thread the engine hands it to (the hand-off orders the two), which clears it
    private Object deliveredBy;

    /** A request posted with {@code wrId}, awaited by parking alone. */
    PostedRequest(long wrId, Kind kind) {
        this(wrId, kind, null);
    }

    /**
     * A request posted with {@code wrId} on a queue pair whose CQ {@code completions} reads: {@link #await} polls it
     * on the awaiting thread first ({@link Registration#pollUntil}).
     */
    PostedRequest(long wrId, Kind kind, Registration completions) {
        this(wrId, kind, completions, -1, true);
    }

    /**
     * As {@link #PostedRequest(long, Kind, Registration)}, in staging slot {@code slot} of its connection (-1: none)
     * and {@code signaled} or not: what the connection needs when it ends (one object per posted request).
     */
    PostedRequest(long wrId, Kind kind, Registration completions, int slot, boolean signaled) {
        this.wrId = wrId;
        this.kind = kind;
        this.completions = completions;
        this.slot = slot;
        this.signaled = signaled;
    }

    /** Sets the order key its completion is delivered under, as the CQ is polled (DeviceQueueSet). */
    void deliveredBy(Object key) {
        this.deliveredBy = key;
    }

    /** The order key its completion is delivered under, or null before it is polled and once it is delivered. */
    Object deliveredBy() {
        return deliveredBy;
    }

    /** Its staging slot in its connection, or -1 (a region of the application's). */
    int slot() {
        return slot;
    }

    /** Whether it was posted signaled (it makes a work completion when it succeeds). */
    boolean signaled() {
        return signaled;
    }

    @Override
    public long wrId() {
        return wrId;
    }

    @Override
    public Kind kind() {
        return kind;
    }

    @Override
    public Completion completion() {
        Completion c = completion;
        if (c != null) {
            return c;
        }
        synchronized (this) {
            if (completion == null) {
                Completion made = new Completion();
                if (done && !consumed) {
                    made.complete(); // completed before anyone asked: its one event is there
                }
                completion = made;
            }
            return completion;
        }
    }

    @Override
    public boolean isDone() {
        return done;
    }

    /** {@link #isDone()}: what an awaiting thread polls its CQ until ({@link Registration#pollUntil}). */
    @Override
    public boolean getAsBoolean() {
        return done;
    }

    @Override
    public WorkCompletion result() {
        if (!done) {
            return null;
        }
        synchronized (this) {
            if (!done) {
                return null; // posted again meanwhile (a listener's receive): its old result is gone
            }
            if (result == null) {
                result = new WorkCompletion(wrId, status, opcode, vendorError, byteLength, immediateData, qpNumber,
                    sourceQp, flags);
            }
            return result;
        }
    }

    // The fields of its work completion, for the connector once it is done: read by the thread that completed it,
    // or one the engine handed it to (the hand-off orders them), without the lock. A listener's receive posted again
    // changes them: a delivered completion that reads them checks that its delivery is not through after reading.

    /** The status of its work completion: {@code enum ibv_wc_status}. */
    int status() {
        return status;
    }

    /** The opcode of its work completion. */
    WcOpcode opcode() {
        return opcode;
    }

    /** The byte_len of its work completion. */
    int byteLength() {
        return byteLength;
    }

    /** The immediate data of its work completion, when {@link #flags()} say so. */
    int immediateData() {
        return immediateData;
    }

    /** The wc_flags of its work completion. */
    int flags() {
        return flags;
    }

    @Override
    public byte[] data() {
        return data;
    }

    @Override
    public RdmaException failure() {
        return failure;
    }

    @Override
    public WorkCompletion await(Duration timeout) throws InterruptedException {
        if (completions != null) {
            // no wake-up needed when this thread reads its own completion; called even when the request is done
            // already, since this thread awaits the CQ all the same (the engine's waiter hold)
            completions.pollUntil(this);
        }
        if (!consumeDone() && !completion().waitForCompletion(timeout)) {
            return null;
        }
        RdmaException f = failure;
        if (f != null) {
            throw f;
        }
        return result();
    }

    /**
     * Consumes the one event of a request that is done while no one made its {@link #completion()}, as waiting on
     * one would, without making it (a lock, a condition and their nodes for each request awaited done).
     *
     * @return whether it consumed the event; false: wait on the completion
     */
    private synchronized boolean consumeDone() {
        if (!done || completion != null || consumed) {
            return false;
        }
        consumed = true;
        return true;
    }

    /**
     * For a receive of the connector's own, done and posted again into its slot as request {@code wrId}: the same
     * object starts afresh, unless someone asked for its {@link #completion()} (who may still wait on it; then a new
     * request is needed). A listener's receive is never handed out: its delivered completion names it internally only.
     *
     * @return whether it starts afresh as {@code wrId}
     */
    synchronized boolean reposted(long wrId) {
        if (!done || completion != null) {
            return false;
        }
        this.wrId = wrId;
        data = null;
        failure = null;
        result = null;
        consumed = false;
        done = false;
        return true;
    }

    /** Records the work completion polled (and received bytes) and completes, once. */
    boolean complete(PolledCompletion polled, byte[] received) {
        return complete(polled, received, null);
    }

    /**
     * Completes, once, as successful: a later signaled request of its send queue completed. {@code covered} is its
     * connection's completion of the covered requests of this kind (its wr_id is none of theirs): this request's
     * own has its fields and this request's wr_id.
     */
    boolean completeCovered(PolledCompletion covered) {
        return complete(covered, null, null);
    }

    /**
     * For the connector's own use: ends a request that can never complete with {@code error}, recording
     * {@code flushed} (status {@code IBV_WC_WR_FLUSH_ERR}) as its result; once, like {@link #complete}.
     */
    boolean fail(PolledCompletion flushed, RdmaException error) {
        if (error == null) {
            throw new IllegalArgumentException("error must not be null");
        }
        return complete(flushed, null, error);
    }

    private boolean complete(PolledCompletion wc, byte[] received, RdmaException error) {
        Completion c;
        synchronized (this) {
            if (done) {
                return false;
            }
            status = wc.status();
            opcode = wc.opcode();
            vendorError = wc.vendorError();
            byteLength = wc.byteLength();
            immediateData = wc.immediateData();
            qpNumber = wc.qpNumber();
            sourceQp = wc.sourceQp();
            flags = wc.flags();
            result = null;
            data = received;
            failure = error; // before done: whoever sees it done sees the failure
            done = true;
            c = completion; // one made later starts with its event (completion())
        }
        if (c != null) {
            c.complete();
        }
        return true;
    }

    @Override
    public String toString() {
        RdmaException f = failure;
        return "WorkRequest[" + kind + " " + wrId + (!done ? ", in flight]"
            : ", " + (f != null ? f.getMessage() : WorkCompletion.statusText(status)) + "]");
    }
}
