package org.rdmaconnector.bench;

import org.rdmaconnector.verbs.CompletionChannel;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.WorkCompletions;

/**
 * The event engine's completion loop for one CQ on one thread, for the benchmarks that run verbs without the engine:
 * poll until the CQ is empty, keep polling for the busy-poll budget after the last completion, then re-arm, poll
 * once more, and only then wait for a CQ event. The CQ must be armed when this starts. Counts the CQ events taken.
 */
final class HybridPoll {
    private final CompletionChannel channel;
    private final CompletionQueue cq;
    private final long budgetNanos;
    private boolean armed = true;
    private long lastFound;
    private long events;

    HybridPoll(CompletionChannel channel, CompletionQueue cq, long budgetNanos) {
        this.channel = channel;
        this.cq = cq;
        this.budgetNanos = budgetNanos;
    }

    /** Waits for the next completions and returns how many of them {@code wcs} now holds (at least one). */
    int next(WorkCompletions wcs) {
        while (true) {
            int ne = cq.poll(wcs);
            if (ne > 0) {
                lastFound = budgetNanos > 0 ? System.nanoTime() : 0;
                return ne;
            }
            if (!armed) {
                if (budgetNanos > 0 && System.nanoTime() - lastFound < budgetNanos) {
                    Thread.onSpinWait();
                    continue; // within the budget: poll again, unarmed
                }
                cq.requestNotify(false);
                armed = true; // and poll again: a completion may have landed before the arming
            } else {
                channel.getCqEvent();
                events++;
                armed = false;
            }
        }
    }

    /** The CQ events taken so far. */
    long events() {
        return events;
    }
}
