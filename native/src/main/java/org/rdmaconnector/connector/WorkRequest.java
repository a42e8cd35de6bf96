package org.rdmaconnector.connector;

import java.time.Duration;
import org.rdmaconnector.verbs.Completion;
import org.rdmaconnector.verbs.WorkCompletion;

/**
 * A posted send or receive: its {@link Completion} completes once, when its work completion arrives (successful or
 * not) or when its endpoint closes first (then {@link #result()} has status {@code IBV_WC_WR_FLUSH_ERR}).
 */
public final class WorkRequest {
    /** What was posted. */
    public enum Kind { SEND, RECEIVE }

    private final long wrId;
    private final Kind kind;
    private final Completion completion = new Completion();
    private volatile WorkCompletion result;
    private volatile byte[] data;

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

    /**
     * Waits up to {@code timeout} for the request and returns its work completion, or null on timeout. Consumes the
     * completion's count like {@link Completion#waitForCompletion(Duration)}.
     */
    public WorkCompletion await(Duration timeout) throws InterruptedException {
        return completion.waitForCompletion(timeout) ? result : null;
    }

    /** For the connector's own use: records the result (and received bytes) and completes, once. */
    public boolean complete(WorkCompletion workCompletion, byte[] received) {
        synchronized (this) {
            if (result != null) {
                return false;
            }
            data = received;
            result = workCompletion;
        }
        completion.complete();
        return true;
    }

    @Override
    public String toString() {
        WorkCompletion r = result;
        return "WorkRequest[" + kind + " " + wrId + (r == null ? ", in flight]" : ", " + r.statusText() + "]");
    }
}
