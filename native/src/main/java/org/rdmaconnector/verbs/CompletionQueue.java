package org.rdmaconnector.verbs;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.verbs.jna.IbVerbs;
import org.rdmaconnector.verbs.jna.Mem;

/**
 * A completion queue ({@code struct ibv_cq}, ibv_create_cq(3)). Poll it for work completions; arm it with
 * {@link #requestNotify(boolean)} to get an event on its {@link CompletionChannel}. Every event the channel hands out
 * for this queue is counted here and acknowledged by {@link #ackEvents()} (batch them) or, at the latest, when the
 * queue closes, so ibv_destroy_cq(3) never blocks. Closing it closes the queue pairs that use it. Thread-safe; one
 * poller at a time per {@link WorkCompletions}.
 */
public final class CompletionQueue extends NativeResource {
    private final DeviceContext context;
    private final CompletionChannel channel;
    private final long cq;
    private final int capacity;
    private final AtomicInteger unacked = new AtomicInteger();
    private final AtomicInteger acked = new AtomicInteger();
    // guards counting an event against destroy's last ack: an event got from the channel while the queue is being
    // destroyed is acked at once, since ibv_destroy_cq waits for every event got to be acked (issue 12, defect 3)
    private final Object counting = new Object();
    private boolean destroying;

    CompletionQueue(DeviceContext context, CompletionChannel channel, long cq) {
        this.context = context;
        this.channel = channel;
        this.cq = cq;
        this.capacity = Mem.getInt(cq + org.rdmaconnector.verbs.jna.Layout.IBV_CQ_CQE);
        dependOn(context);
        if (channel != null) {
            channel.attach(this, cq);
        }
    }

    /** The device context it belongs to. */
    public DeviceContext context() {
        return context;
    }

    /** Its completion channel, or null for a polled-only queue. */
    public CompletionChannel channel() {
        return channel;
    }

    /** The number of entries the device gave it (at least what was asked). */
    public int capacity() {
        return capacity;
    }

    /**
     * ibv_req_notify_cq(3): arms the queue so the next completion (only solicited ones if {@code solicitedOnly})
     * produces one event on its channel.
     */
    public void requestNotify(boolean solicitedOnly) {
        if (channel == null) {
            throw new IllegalStateException("CompletionQueue has no completion channel to notify");
        }
        acquire();
        try {
            int rc = context.ops().ibv_req_notify_cq(cq, solicitedOnly ? 1 : 0);
            if (rc != 0) {
                throw RdmaErrors.fromReturnCode("ibv_req_notify_cq", rc, context.deviceName());
            }
        } finally {
            release();
        }
    }

    /**
     * ibv_poll_cq(3): fills {@code into} with up to its capacity of completions.
     *
     * @return how many were polled; 0 when the queue is empty
     */
    public int poll(WorkCompletions into) {
        if (into == null) {
            throw new IllegalArgumentException("into must not be null");
        }
        acquire();
        try {
            int n = context.ops().ibv_poll_cq(cq, into.capacity(), into.address());
            if (n < 0) {
                into.filled(0);
                // providers return -1 with errno set, or a negative errno
                throw RdmaErrors.of("ibv_poll_cq", n == -1 ? Mem.errno() : -n, context.deviceName());
            }
            into.filled(n);
            return n;
        } finally {
            release();
        }
    }

    /** Polls up to {@code max} completions (1 to {@link WorkCompletions#MAX_CAPACITY}) into a new list. */
    public List<WorkCompletion> poll(int max) {
        try (WorkCompletions batch = new WorkCompletions(max)) {
            int n = poll(batch);
            List<WorkCompletion> list = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                list.add(batch.get(i));
            }
            return list;
        }
    }

    /** Acknowledges every event counted so far (ibv_ack_cq_events(3), one call for the batch). */
    public void ackEvents() {
        acquire();
        try {
            ackCounted();
        } finally {
            release();
        }
    }

    private void ackCounted() {
        int n = unacked.getAndSet(0);
        if (n > 0) {
            IbVerbs.ibv_ack_cq_events(cq, n);
            acked.addAndGet(n);
            channel.acknowledged(n);
        }
    }

    /** Events received on the channel for this queue and not yet acknowledged. */
    public int unackedEvents() {
        return unacked.get();
    }

    /** Events acknowledged so far. */
    public int ackedEvents() {
        return acked.get();
    }

    /**
     * Counts an event the channel got for this queue, for {@link #ackEvents()}; while the queue is being destroyed,
     * acks it at once instead (the queue is still there: ibv_destroy_cq is waiting for this very ack). Does not take
     * the close guard, which a destroying thread holds while it waits.
     */
    void eventReceived() {
        synchronized (counting) {
            if (!destroying) {
                unacked.incrementAndGet();
                return;
            }
        }
        IbVerbs.ibv_ack_cq_events(cq, 1);
        acked.incrementAndGet();
        if (channel != null) {
            channel.acknowledged(1);
        }
    }

    long address() {
        return cq;
    }

    @Override
    protected void destroy() {
        synchronized (counting) {
            destroying = true; // from now on an event got is acked by whoever got it, not counted
        }
        ackCounted();
        int rc = IbVerbs.ibv_destroy_cq(cq);
        if (rc != 0) {
            synchronized (counting) {
                destroying = false; // the queue stays open: count events again
            }
            throw RdmaErrors.fromReturnCode("ibv_destroy_cq", rc, context.deviceName());
        }
        if (channel != null) {
            channel.detach(cq);
        }
    }
}
