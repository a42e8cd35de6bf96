package org.rdmaconnector.connector.spi;

import java.time.Duration;
import org.rdmaconnector.connector.Completion;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;

/** The connector's {@link WorkRequest}: made when a request is posted, completed or failed once by the connector. */
final class PostedRequest implements WorkRequest {
    private final long wrId;
    private final Kind kind;
    private final Completion completion = new Completion();
    private volatile WorkCompletion result;
    private volatile byte[] data;
    private volatile RdmaException failure;

    /** A request posted with {@code wrId}. */
    PostedRequest(long wrId, Kind kind) {
        this.wrId = wrId;
        this.kind = kind;
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
        return completion;
    }

    @Override
    public boolean isDone() {
        return result != null;
    }

    @Override
    public WorkCompletion result() {
        return result;
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
        if (!completion.waitForCompletion(timeout)) {
            return null;
        }
        RdmaException f = failure;
        if (f != null) {
            throw f;
        }
        return result;
    }

    /** Records the result (and received bytes) and completes, once. */
    boolean complete(WorkCompletion workCompletion, byte[] received) {
        return complete(workCompletion, received, null);
    }

    /**
     * For the connector's own use: ends a request that can never complete with {@code error}, recording
     * {@code flushed} (status {@code IBV_WC_WR_FLUSH_ERR}) as its result; once, like {@link #complete}.
     */
    boolean fail(WorkCompletion flushed, RdmaException error) {
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
