package org.rdmaconnector.verbs;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.jna.IbVerbs;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;
import org.rdmaconnector.verbs.jna.Scratch;

/**
 * A completion channel ({@code struct ibv_comp_channel}, ibv_create_comp_channel(3)): a file descriptor that becomes
 * readable when a completion queue attached to it, armed with {@link CompletionQueue#requestNotify(boolean)}, gets a
 * completion. Can be made non-blocking and polled. As the man page says, closing it while completion queues are
 * still attached fails with {@code EBUSY}; its {@link DeviceContext} closes the queues first. Thread-safe; in
 * blocking mode a {@link #close()} from another thread waits for a blocked {@link #getCqEvent()} to return.
 */
public final class CompletionChannel extends FdChannel {
    private final DeviceContext context;
    private final long channel;
    // the attached queues, found by their ibv_cq's address: copied on attach and detach (rare), read with no lock and
    // no boxed address (one lookup per CQ event)
    private volatile CompletionQueue[] queues = new CompletionQueue[0];
    private final Object attaching = new Object();
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong acknowledged = new AtomicLong();

    CompletionChannel(DeviceContext context, long channel) {
        super(Mem.getInt(channel + Layout.IBV_COMP_CHANNEL_FD), "completion channel");
        this.context = context;
        this.channel = channel;
        dependOn(context);
    }

    /** The device context it belongs to. */
    public DeviceContext context() {
        return context;
    }

    /**
     * ibv_get_cq_event(3): the completion queue that got a completion. The event is counted on the queue, to be
     * acknowledged with {@link CompletionQueue#ackEvents()} (batched) or when the queue closes. Blocks unless
     * non-blocking; then returns null when no event is pending. The queue must be re-armed to get the next event.
     */
    public CompletionQueue getCqEvent() {
        acquire();
        try {
            long cq = readCqEvent();
            return cq == 0 ? null : countCqEvent(cq);
        } finally {
            release();
        }
    }

    // ibv_get_cq_event: the address of the queue that got the event, 0 when none is pending (non-blocking).
    // Only between acquire() and release(), and always followed by countCqEvent.
    long readCqEvent() {
        long address = Scratch.address();
        if (IbVerbs.ibv_get_cq_event(channel, address, address + 8) != 0) {
            int errno = Mem.errno();
            if (errno == Layout.EAGAIN) {
                return 0;
            }
            throw RdmaErrors.of("ibv_get_cq_event", errno, description());
        }
        return Mem.getLong(address);
    }

    // Counts (or, if the queue is being destroyed, acks) an event got by readCqEvent. The queue may be closing on
    // another thread meanwhile: it stays attached, and its memory valid, until this event is acked.
    CompletionQueue countCqEvent(long cq) {
        CompletionQueue queue = attached(cq);
        if (queue == null) {
            // cannot happen while queues register before they are armed; ack so nothing blocks forever
            IbVerbs.ibv_ack_cq_events(cq, 1);
            throw new IllegalStateException("event for a completion queue unknown to this channel");
        }
        received.incrementAndGet();
        queue.eventReceived();
        return queue;
    }

    /** Events {@link #getCqEvent()} has returned. */
    public long eventsReceived() {
        return received.get();
    }

    /** Events acknowledged by the queues of this channel (batched, or when a queue closed). */
    public long eventsAcknowledged() {
        return acknowledged.get();
    }

    void acknowledged(int events) {
        acknowledged.addAndGet(events);
    }

    void attach(CompletionQueue queue, long cq) {
        synchronized (attaching) {
            CompletionQueue[] now = without(cq);
            CompletionQueue[] attached = Arrays.copyOf(now, now.length + 1);
            attached[now.length] = queue;
            queues = attached;
        }
    }

    void detach(long cq) {
        synchronized (attaching) {
            queues = without(cq);
        }
    }

    /** The attached queue whose ibv_cq is at {@code cq}, or null. */
    private CompletionQueue attached(long cq) {
        for (CompletionQueue queue : queues) {
            if (queue.address() == cq) {
                return queue;
            }
        }
        return null;
    }

    /** The attached queues but the one at {@code cq} (the same array when none is). */
    private CompletionQueue[] without(long cq) {
        CompletionQueue[] now = queues;
        for (int i = 0; i < now.length; i++) {
            if (now[i].address() == cq) {
                CompletionQueue[] fewer = new CompletionQueue[now.length - 1];
                System.arraycopy(now, 0, fewer, 0, i);
                System.arraycopy(now, i + 1, fewer, i, fewer.length - i);
                return fewer;
            }
        }
        return now;
    }

    /** The completion queues attached to this channel. */
    public java.util.List<CompletionQueue> queues() {
        return java.util.List.of(queues);
    }

    /** How many completion queues are attached. */
    public int attachedQueues() {
        return queues.length;
    }

    long address() {
        return channel;
    }

    @Override
    protected void destroy() {
        int rc = IbVerbs.ibv_destroy_comp_channel(channel);
        if (rc != 0) {
            throw RdmaErrors.fromReturnCode("ibv_destroy_comp_channel", rc,
                queues.length + " completion queue(s) attached");
        }
    }

    @Override
    public String toString() {
        return "CompletionChannel[" + description() + ", " + context.deviceName() + (isClosed() ? ", closed]" : "]");
    }
}
