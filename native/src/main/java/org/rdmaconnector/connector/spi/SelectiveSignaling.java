package org.rdmaconnector.connector.spi;

import java.util.ArrayDeque;

/**
 * Selective signaling of one queue pair's send queue. An unsignaled request (no {@code IBV_SEND_SIGNALED})
 * produces no work completion when it succeeds, only when it fails. RC completes a send queue in order, so the
 * completion of a later signaled request means every unsignaled one posted before it is done. A failed one would have
 * produced its own completion first. This class records the unsignaled requests in post order and tells which ones a
 * signaled completion covers.
 *
 * <p>The device frees an unsignaled request's slot in the send queue only when a later completion is polled. A send
 * queue full of unsignaled requests would stay full for ever, so at most {@code depth - 1} requests in a row go
 * unsignaled: the next one is signaled whatever was asked.
 *
 * <p>Work request ids must grow in post order: take the id and post under the caller's lock, then call
 * {@link #posted}. Thread-safe.
 */
final class SelectiveSignaling {
    private static final long[] NONE = new long[0];

    private final int depth;
    // guarded by this: the work request ids of unsignaled requests not yet covered, oldest first
    private final ArrayDeque<Long> unsignaled = new ArrayDeque<>();
    private int run;

    /** For a send queue of {@code depth} requests (the depth asked for: the device may grant more). */
    SelectiveSignaling(int depth) {
        if (depth < 1) {
            throw new IllegalArgumentException("send queue depth must be at least 1, was " + depth);
        }
        this.depth = depth;
    }

    /**
     * Whether the request posted next is signaled: when {@code wanted}, or when {@code depth - 1} requests in a row
     * went unsignaled already.
     */
    synchronized boolean signals(boolean wanted) {
        return wanted || run >= depth - 1;
    }

    /** Records request {@code wrId}, just posted, {@code signaled} or not. */
    synchronized void posted(long wrId, boolean signaled) {
        if (signaled) {
            run = 0;
        } else {
            run++;
            unsignaled.add(wrId);
        }
    }

    /**
     * Removes and returns the unsignaled requests posted before {@code signaledWrId}, whose work completion has just
     * been polled, oldest first. Those that completed alone are not among them.
     */
    synchronized long[] coveredBy(long signaledWrId) {
        Long oldest = unsignaled.peekFirst();
        if (oldest == null || oldest >= signaledWrId) {
            return NONE; // the common case, without an iterator
        }
        int n = 0;
        for (Long wrId : unsignaled) {
            if (wrId >= signaledWrId) {
                break;
            }
            n++;
        }
        long[] covered = new long[n];
        for (int i = 0; i < n; i++) {
            covered[i] = unsignaled.poll();
        }
        return covered;
    }

    /** Forgets unsignaled request {@code wrId}: it made a completion of its own (a failure, or a flush). */
    synchronized void completedAlone(long wrId) {
        unsignaled.remove(wrId);
    }

    /** Unsignaled requests neither covered by a signaled completion nor completed alone. */
    synchronized int uncovered() {
        return unsignaled.size();
    }
}
