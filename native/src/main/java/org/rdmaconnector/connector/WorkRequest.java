package org.rdmaconnector.connector;

import java.time.Duration;
import org.rdmaconnector.verbs.Completion;
import org.rdmaconnector.verbs.RdmaException;
import org.rdmaconnector.verbs.WorkCompletion;

/**
 * A posted send or receive: its {@link Completion} completes once, when its work completion arrives (successful or
 * not) or when its endpoint closes first (then {@link #result()} has status {@code IBV_WC_WR_FLUSH_ERR}), or when
 * it can never complete because its device was removed (then {@link #failure()} says so, {@link #result()} is
 * flushed, and {@link #await} throws).
 */
public final class WorkRequest {
    /** What was posted. */
    public enum Kind { SEND, RECEIVE }

    private final long wrId;
    private final Kind kind;
    private final Completion completion = new Completion();
    private volatile WorkCompletion result;
    private volatile byte[] data;
    private volatile RdmaException failure;

    /** For the connector's own use: a request posted with {@code wrId}. */
    public WorkRequest(long wrId, Kind kind) {
        this.wrId = wrId;
        this.kind = kind;
    }

    /** The work request id the connector posted it with. */
    public long wrId() {
        return wrId;
    }

    /** Send or receive. */
    public Kind kind() {
        return kind;
    }

    /** Completes once the request is done: wait on it, or poll it with {@code tryWaitForCompletion()}. */
    public Completion completion() {
        return completion;
    }

    /** Whether the request is done (does not consume the completion). */
    public boolean isDone() {
        return result != null;
    }

    /** The work completion, or null while the request is in flight. */
    public WorkCompletion result() {
        return result;
    }

    /** For a receive into the endpoint's own slot: a copy of the bytes received; otherwise null. */
    public byte[] data() {
        return data;
    }

    /** Why the request ended without a work completion of its own (its device was removed), or null. */
    public RdmaException failure() {
        return failure;
    }

    /**
     * Waits up to {@code timeout} for the request and returns its work completion, or null on timeout. Consumes the
     * completion's count like {@link Completion#waitForCompletion(Duration)}.
     *
     * @throws RdmaException the {@link #failure()} of a request that can never complete (ENODEV, "device removed")
     */
    public WorkCompletion await(Duration timeout) throws InterruptedException {
        if (!completion.waitForCompletion(timeout)) {
            return null;
        }
        RdmaException f = failure;
        if (f != null) {
            throw f;
        }
        return result;
    }

    /** For the connector's own use: records the result (and received bytes) and completes, once. */
    public boolean complete(WorkCompletion workCompletion, byte[] received) {
        return complete(workCompletion, received, null);
    }

    /**
     * For the connector's own use: ends a request that can never complete with {@code error}, recording
     * {@code flushed} (status {@code IBV_WC_WR_FLUSH_ERR}) as its result; once, like {@link #complete}.
     */
    public boolean fail(WorkCompletion flushed, RdmaException error) {
        if (error == null) {
            throw new IllegalArgumentException("error must not be null");
        }
        return complete(flushed, null, error);
    }

    private boolean complete(WorkCompletion workCompletion, byte[] received, RdmaException error) {
        synchronized (this) {
            if (result != null) {
                return false;
            }
            data = received;
            failure = error; // before result: whoever sees the result done sees the failure
            result = workCompletion;
        }
        completion.complete();
        return true;
    }

    @Override
    public String toString() {
        WorkCompletion r = result;
        RdmaException f = failure;
        return "WorkRequest[" + kind + " " + wrId + (r == null ? ", in flight]"
            : ", " + (f != null ? f.getMessage() : r.statusText()) + "]");
    }
}
