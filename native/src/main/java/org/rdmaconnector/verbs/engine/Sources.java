package org.rdmaconnector.verbs.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.verbs.AsyncEvent;
import org.rdmaconnector.verbs.CmEvent;
import org.rdmaconnector.verbs.CompletionChannel;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.PolledCompletion;
import org.rdmaconnector.verbs.WorkCompletions;

/** The event sources of the RDMA channels: CM events, work completions, device async events. */
public final class Sources {
    /** Completion-queue events acknowledged in one ibv_ack_cq_events call (the man page's advice: batch them). */
    public static final int DEFAULT_ACK_BATCH = 32;
    private static final int POLL_BATCH = 16;

    private Sources() {
    }

    /**
     * The CM events of {@code channel} (made non-blocking), copied and acknowledged; ordered per connection (the
     * event's id: a CONNECT_REQUEST and the later events of the accepted connection share it).
     */
    public static EventSource<CmEvent> cmEvents(EventChannel channel) {
        if (channel == null) {
            throw new IllegalArgumentException("channel must not be null");
        }
        int fd = channel.fd();
        return new FdSource<>(fd, () -> channel.setNonBlocking(true), channel::getEvent, CmEvent::id,
            "cm-events[fd " + fd + "]");
    }

    /**
     * The work completions of the queues on {@code channel}, with the CQ cycle of ibv_get_cq_event(3) turned around
     * so that a busy queue needs no event per completion: get the event, count it (acked in batches of
     * {@code ackBatch}), poll until empty; the queue is re-armed only when the engine is about to wait
     * ({@link EventSource#armBeforeWait()}), after its busy-poll budget, and polled once more then, so a completion
     * that lands between the last poll and the arming is never missed. On open it arms every queue already attached
     * and polls it once; a queue created later must be armed once by its creator ({@code requestNotify(false)}). On
     * close it acknowledges every counted event. Ordered per queue pair. Each completion is a copy.
     */
    public static EventSource<WorkCompletion> completions(CompletionChannel channel, int ackBatch) {
        return completions(channel, ackBatch, COPIES);
    }

    /**
     * As {@link #completions(CompletionChannel, int)}, each completion read in place by {@code reader}, which makes
     * the event (or drops the completion): no object per completion unless the reader makes one.
     */
    public static <E> EventSource<E> completions(CompletionChannel channel, int ackBatch, CompletionReader<E> reader) {
        if (channel == null || reader == null) {
            throw new IllegalArgumentException("channel and reader must not be null");
        }
        if (ackBatch < 1 || ackBatch > 65536) {
            throw new IllegalArgumentException("ackBatch must be from 1 to 65536, was " + ackBatch);
        }
        return new CompletionSource<>(channel, ackBatch, reader);
    }

    /** What a completion source makes of each completion polled, on the thread that reads the queue. */
    public interface CompletionReader<E> {
        /**
         * The event {@code polled} gives, or null to drop it (it is read, acknowledged and not delivered).
         * {@code polled} is reused for the next completion: read it before returning.
         */
        E read(PolledCompletion polled);

        /** The order key of {@code event} ({@link EventSource#orderKey}). */
        Object orderKey(E event);
    }

    /** A copy of each completion, ordered per queue pair (its number). */
    private static final CompletionReader<WorkCompletion> COPIES = new CompletionReader<>() {
        @Override
        public WorkCompletion read(PolledCompletion polled) {
            return polled.toWorkCompletion();
        }

        @Override
        public Object orderKey(WorkCompletion completion) {
            return completion.qpNumber();
        }
    };

    /** {@link #completions(CompletionChannel, int)} with acks batched by {@value #DEFAULT_ACK_BATCH}. */
    public static EventSource<WorkCompletion> completions(CompletionChannel channel) {
        return completions(channel, DEFAULT_ACK_BATCH);
    }

    /** The async events of {@code context} (its async fd made non-blocking), copied and acknowledged. */
    public static EventSource<AsyncEvent> asyncEvents(DeviceContext context) {
        if (context == null) {
            throw new IllegalArgumentException("context must not be null");
        }
        int fd = context.asyncFd();
        return new FdSource<>(fd, () -> context.setAsyncNonBlocking(true), context::getAsyncEvent, null,
            "async-events[" + context.deviceName() + ", fd " + fd + "]");
    }

    /** A source that is one non-blocking get-event call on one fd. */
    private record FdSource<E>(int fd, Runnable opener, java.util.function.Supplier<E> reader,
                               java.util.function.Function<E, Object> keyOf, String name) implements EventSource<E> {
        @Override
        public void open() {
            opener.run();
        }

        @Override
        public E next() {
            return reader.get();
        }

        @Override
        public Object orderKey(E event) {
            return keyOf == null ? this : keyOf.apply(event);
        }
    }

    private static final class CompletionSource<E> implements EventSource<E> {
        private final CompletionChannel channel;
        private final int ackBatch;
        private final int fd;
        private final CompletionReader<E> reader;
        private final WorkCompletions batch = new WorkCompletions(POLL_BATCH);
        private final PolledCompletion entry = new PolledCompletion();
        private final Set<CompletionQueue> seen = new LinkedHashSet<>();
        // queues to poll in this pass (from an event, or unarmed ones polled again); queues polled empty and not
        // armed since, armed by armBeforeWait
        private final ArrayDeque<CompletionQueue> pending = new ArrayDeque<>();
        // a list, not a set: a channel has a few queues, and adding to a list allocates nothing on this hot path
        private final List<CompletionQueue> unarmed = new ArrayList<>();
        // the queues seen, as an array for poll() (no iterator); null when seen changed since
        private CompletionQueue[] known;
        // the queue being read, its polled completions in batch, and the next of them to return
        private CompletionQueue current;
        private int polled;
        private int index;
        // next() is in a pass: it returns null once, at the pass's end; the next call starts a pass anew
        private boolean inPass;

        CompletionSource(CompletionChannel channel, int ackBatch, CompletionReader<E> reader) {
            this.channel = channel;
            this.ackBatch = ackBatch;
            this.reader = reader;
            this.fd = channel.fd();
        }

        @Override
        public int fd() {
            return fd;
        }

        @Override
        public void open() {
            channel.setNonBlocking(true);
            for (CompletionQueue queue : channel.queues()) {
                queue.requestNotify(false);
                see(queue);
                pending.add(queue); // completions that arrived before it was armed raise no event: poll once
            }
        }

        @Override
        public E next() {
            if (!inPass) {
                inPass = true;
                for (int i = 0; i < unarmed.size(); i++) { // busy polling, or the look after arming: poll each again
                    pending.add(unarmed.get(i));
                }
                unarmed.clear();
            }
            while (true) {
                if (current != null) {
                    E completion = fromCurrent();
                    if (completion != null) {
                        return completion;
                    }
                }
                CompletionQueue queue = pending.poll();
                if (queue == null) {
                    queue = channel.getCqEvent();
                    if (queue == null) {
                        inPass = false;
                        return null;
                    }
                    see(queue);
                    try {
                        if (queue.unackedEvents() >= ackBatch) {
                            queue.ackEvents();
                        }
                    } catch (IllegalStateException closedMeanwhile) {
                        forget(queue); // its owner closed it (acking its events): nothing to deliver
                        continue;
                    }
                }
                current = queue;
            }
        }

        /**
         * On a waiting thread: what the current queue still holds, then what the queues seen so far give when polled.
         * Reads no CQ event (that is next()'s, or the queue could stay unarmed while the loop sleeps); a queue drained
         * here is polled again and armed by the loop, as one drained by next().
         */
        @Override
        public E poll() {
            if (current != null) {
                E completion = fromCurrent();
                if (completion != null) {
                    return completion;
                }
            }
            CompletionQueue[] queues = known;
            if (queues == null) {
                queues = known = seen.toArray(new CompletionQueue[0]);
            }
            for (CompletionQueue queue : queues) {
                current = queue;
                E completion = fromCurrent();
                if (completion != null) {
                    return completion;
                }
            }
            return null;
        }

        // the current queue's next completion the reader keeps, polling it when its batch is used up; null when it is
        // drained, and then it is no longer current and is left for armBeforeWait to arm, or for the next pass to poll
        private E fromCurrent() {
            while (true) {
                while (index < polled) {
                    batch.read(index++, entry);
                    E event = reader.read(entry);
                    if (event != null) {
                        return event;
                    }
                }
                index = 0;
                polled = pollCurrent();
                if (polled == 0) {
                    break;
                }
            }
            if (!unarmed.contains(current)) {
                unarmed.add(current);
            }
            current = null;
            return null;
        }

        private void see(CompletionQueue queue) {
            if (seen.add(queue)) {
                known = null;
                if (seen.size() > 256) {
                    seen.removeIf(CompletionQueue::isClosed); // closed queues acked their own events
                }
            }
        }

        private void forget(CompletionQueue queue) {
            if (seen.remove(queue)) {
                known = null;
            }
        }

        @Override
        public boolean armBeforeWait() {
            for (int i = unarmed.size() - 1; i >= 0; i--) { // by index: no iterator on the hot path
                CompletionQueue queue = unarmed.get(i);
                try {
                    queue.requestNotify(false);
                } catch (IllegalStateException closedMeanwhile) {
                    unarmed.remove(i); // its owner closed it: nothing to arm or deliver
                    forget(queue);
                }
            }
            return !unarmed.isEmpty(); // the next pass polls them once more
        }

        @Override
        public boolean busyPollable() {
            return true;
        }

        private int pollCurrent() {
            try {
                return current.poll(batch);
            } catch (IllegalStateException closedMeanwhile) {
                forget(current);
                return 0; // and it is left unarmed: arming fails the same way and drops it
            }
        }

        @Override
        public Object orderKey(E completion) {
            return reader.orderKey(completion);
        }

        @Override
        public void close() {
            for (CompletionQueue queue : seen) {
                if (!queue.isClosed()) {
                    try {
                        queue.ackEvents();
                    } catch (IllegalStateException closedMeanwhile) {
                        // closing the queue acknowledged its events
                    }
                }
            }
            seen.clear();
            known = null;
            current = null;
            polled = 0;
            unarmed.clear();
            pending.clear();
            batch.close();
        }

        @Override
        public long acknowledged() {
            return channel.eventsAcknowledged();
        }

        @Override
        public String name() {
            return "completions[fd " + fd + "]";
        }
    }
}
