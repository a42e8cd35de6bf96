package org.rdmaconnector.connector.spi;

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
 * <p>Work request ids must grow in post order: take the id, call {@link #posted} and post under the caller's lock
 * (one lock per send queue, not this object's: a thread that polls the CQ then never waits here for another's post).
 * Thread-safe.
 */
final class SelectiveSignaling {
    private final int depth;
    // guarded by this: the work request ids of unsignaled requests not yet covered, oldest first, in a ring of longs
    // (a post boxes no id): count of them from head; the capacity a power of two, grown when full
    private long[] unsignaled = new long[16];
    private int head;
    private int count;
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

    /**
     * Records request {@code wrId}, about to be posted, {@code signaled} or not (its completion may be polled as soon
     * as it is posted).
     *
     * @return the count of unsignaled requests in a row before it, for {@link #unposted} should its post fail
     */
    synchronized int posted(long wrId, boolean signaled) {
        int before = run;
        if (signaled) {
            run = 0;
            return before;
        }
        run++;
        if (count == unsignaled.length) {
            long[] grown = new long[2 * count];
            for (int i = 0; i < count; i++) {
                grown[i] = at(i);
            }
            unsignaled = grown;
            head = 0;
        }
        unsignaled[(head + count) & (unsignaled.length - 1)] = wrId;
        count++;
        return before;
    }

    /**
     * Forgets request {@code wrId}, whose post failed, and puts the count of unsignaled requests in a row back to
     * {@code runBefore} (what {@link #posted} returned): a failed signaled post must not count as the signaled one
     * that frees the send queue.
     */
    synchronized void unposted(long wrId, int runBefore) {
        completedAlone(wrId);
        run = runBefore;
    }

    /**
     * Removes and returns the oldest unsignaled request posted before {@code signaledWrId}, whose work completion has
     * just been polled; -1 when none is left (those that completed alone are not among them). Called until -1, it
     * gives every request the completion covers, oldest first, with no array made.
     */
    synchronized long nextCoveredBy(long signaledWrId) {
        if (count == 0 || unsignaled[head] >= signaledWrId) {
            return -1;
        }
        long wrId = unsignaled[head];
        head = (head + 1) & (unsignaled.length - 1);
        count--;
        return wrId;
    }

    /** Forgets unsignaled request {@code wrId}: it made a completion of its own (a failure, or a flush). */
    synchronized void completedAlone(long wrId) {
        for (int i = 0; i < count; i++) {
            if (at(i) == wrId) {
                for (int j = i; j < count - 1; j++) { // rare: close the gap, keeping the order
                    unsignaled[(head + j) & (unsignaled.length - 1)] = at(j + 1);
                }
                count--;
                return;
            }
        }
    }

    /** Unsignaled requests neither covered by a signaled completion nor completed alone. */
    synchronized int uncovered() {
        return count;
    }

    private long at(int i) {
        return unsignaled[(head + i) & (unsignaled.length - 1)];
    }
}
