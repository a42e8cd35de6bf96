package org.rdmaconnector.bench;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.verbs.CmEvent;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.CompletionChannel;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.ConnectionParameters;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.MemoryRegion;
import org.rdmaconnector.verbs.PortSpace;
import org.rdmaconnector.verbs.ProtectionDomain;
import org.rdmaconnector.verbs.QueuePair;
import org.rdmaconnector.verbs.QueuePairCapabilities;
import org.rdmaconnector.verbs.WorkCompletions;

/**
 * rdma-core's {@code ibv_rc_pingpong -e} through rdma-native: the same event-mode loop (get the CQ event, re-arm,
 * poll up to 2, count sends and receives, refill receives when one is left, send when the previous send and a
 * receive have completed, acknowledge the CQ events at the end), the same message size and receive depth. The
 * connection is made with the RDMA CM instead of a TCP exchange (untimed, as in the C tool). The first
 * {@code WARMUP} exchanges are untimed (the JIT); the result prints in the C tool's format.
 * Usage: {@code RcPingPong server PORT SIZE ITERS WARMUP} or {@code RcPingPong client ADDRESS PORT SIZE ITERS WARMUP}.
 */
public final class RcPingPong {
    private static final long RECV_WRID = 1;
    private static final long SEND_WRID = 2;
    private static final int RX_DEPTH = 500;
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    /** {@code -Drcpingpong.profile=true}: time each call of the timed part (adds clock reads to the loop). */
    private static final boolean PROFILE = Boolean.getBoolean("rcpingpong.profile");
    /**
     * {@code -Drcpingpong.busyPollMicros=N}: the event engine's hybrid polling instead of the C tool's
     * event-per-wake-up loop: poll until the CQ is empty, keep polling for N us after the last completion, then re-arm,
     * poll once more, and only then wait for a CQ event. 0 is drain, re-arm, re-poll (no busy polling). Unset (-1):
     * the C tool's loop.
     */
    private static final long BUSY_POLL_NANOS = Long.getLong("rcpingpong.busyPollMicros", -1) * 1000;
    /** {@code -Drcpingpong.quietMillis=N}: how long the client's JIT must be idle before each of its waits ends. */
    private static final long QUIET_MILLIS = Long.getLong("rcpingpong.quietMillis", 1000);

    /** Where the time of the timed exchanges goes, per CQ event and per send. */
    private static final class Profile {
        private long get;
        private long notify;
        private long poll;
        private long send;
        private long events;
        private long sends;

        void add(long t0, long t1, long t2, long t3) {
            get += t1 - t0;
            notify += t2 - t1;
            poll += t3 - t2;
            events++;
        }

        void send(long t0, long t1) {
            send += t1 - t0;
            sends++;
        }

        @Override
        public String toString() {
            return String.format("profile: %d CQ events, per event: ibv_get_cq_event %.1f us, ibv_req_notify_cq %.1f us,"
                + " ibv_poll_cq %.1f us; per send: ibv_post_send %.1f us", events, get / 1e3 / events,
                notify / 1e3 / events, poll / 1e3 / events, send / 1e3 / sends);
        }
    }

    private final boolean client;
    private final CompletionChannel channel;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final MemoryRegion buffer;
    private final int size;
    private final WorkCompletions wcs = new WorkCompletions(2);
    private int routs;
    private int rcnt;
    private int scnt;
    // the exchanges the running part of the loop ends at
    private int limit;
    private long waitedForJit;
    private long pending;
    private long start;
    private long startCpu;
    private long startJit = -1;
    // CQ events taken by rc_pingpong's loop; the engine's loop counts its own
    private long loopEvents;
    private long eventsAtStart;
    private final HybridPoll hybrid;
    private final Profile profile = new Profile();

    private RcPingPong(boolean client, CmId id, DeviceContext context, int size) {
        this.client = client;
        this.size = size;
        ProtectionDomain pd = context.allocateProtectionDomain();
        channel = context.createCompletionChannel();
        cq = context.createCompletionQueue(RX_DEPTH + 1, channel, 0);
        qp = id.createQueuePair(pd, cq, cq, QueuePairCapabilities.of(1, RX_DEPTH));
        // page-aligned, like the C tool's memalign(page_size, size): rxe copies page by page
        buffer = pd.register(ByteBuffer.allocateDirect(size + 4096).alignedSlice(4096).limit(size));
        routs = postReceives(RX_DEPTH);
        cq.requestNotify(false);
        hybrid = BUSY_POLL_NANOS >= 0 ? new HybridPoll(channel, cq, BUSY_POLL_NANOS) : null;
        // what the timing reads, loaded now rather than at the timed part's start (see run)
        processCpuNanos();
        JitTime.millis();
    }

    private int postReceives(int n) {
        for (int i = 0; i < n; i++) {
            qp.postReceive(buffer, 0, size, RECV_WRID);
        }
        return n;
    }

    /** The next CM event of {@code channel}, within 10 s, which must be of {@code type} (also for LayeredEcho). */
    static CmEvent expect(EventChannel channel, CmEventType type) {
        if (!channel.awaitEvent(TIMEOUT)) {
            throw new IllegalStateException("no CM event within " + TIMEOUT + ", expected " + type);
        }
        CmEvent event = channel.getEvent();
        if (event.type() != type) {
            throw new IllegalStateException("expected " + type + ", got " + event + " status " + event.status());
        }
        return event;
    }

    /**
     * The loop of rc_pingpong.c for {@code warmup + iters} exchanges; returns the seconds of the last {@code iters}.
     * With {@link #BUSY_POLL_NANOS} set, the event engine's loop instead: the CQ is drained and busy-polled before it
     * is re-armed and polled once more, so completions that arrive while one is handled or within the budget need no
     * event of their own. The loop runs in parts, as {@code LayeredEcho}'s clients do ({@link JitTime#warmUp}): after
     * each part of the warm-up the client waits until its JIT is idle ({@code -Drcpingpong.quietMillis}, default
     * 1000; the server waits for its next message meanwhile). What the timing reads is loaded before: a branch first
     * taken at the boundary, or a class first loaded there, made the JIT compile the loop again in the timed part
     * (BENCHMARKS.md, "Which threads run per message").
     */
    private double run(int warmup, int iters) throws InterruptedException {
        JitTime.warmUp(warmup, this::exchange, this::awaitJit);
        startTiming();
        exchange(warmup + iters);
        if (PROFILE) {
            System.out.println(profile);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        long cpu = processCpuNanos() - startCpu;
        long events = events() - eventsAtStart;
        System.out.printf("%d CQ events in the timed part = %.2f per exchange%n", events, (double) events / iters);
        System.out.printf("%.2f usec/iter CPU (the process, timed part)%n", cpu / 1e3 / iters);
        System.out.printf("JIT compilation in the timed part: %d ms%n", JitTime.since(startJit));
        if (client && warmup > 0) {
            System.out.printf("waited %d ms in all, during and after the warm-up, for the JIT to go quiet%n",
                waitedForJit);
        }
        return seconds;
    }

    /** The client, between two parts of the loop: waits until its JIT is idle ({@link JitTime#awaitQuiet}). */
    private void awaitJit() throws InterruptedException {
        if (client) {
            waitedForJit += JitTime.awaitQuiet(QUIET_MILLIS);
        }
    }

    /** rc_pingpong's loop (or the engine's) until {@code until} exchanges are done; the client sends first. */
    private void exchange(int until) {
        limit = until;
        pending = RECV_WRID;
        if (client) {
            qp.postSend(buffer, 0, size, SEND_WRID, true);
            pending |= SEND_WRID;
        }
        while (rcnt < until || scnt < until) {
            if (hybrid != null) {
                handle(hybrid.next(wcs));
                continue;
            }
            long t0 = PROFILE ? System.nanoTime() : 0;
            channel.getCqEvent();
            loopEvents++;
            long t1 = PROFILE ? System.nanoTime() : 0;
            cq.requestNotify(false);
            long t2 = PROFILE ? System.nanoTime() : 0;
            int ne = cq.poll(wcs);
            if (PROFILE && start != 0) {
                profile.add(t0, t1, t2, System.nanoTime());
            }
            handle(ne);
        }
    }

    private void startTiming() {
        start = System.nanoTime();
        startCpu = processCpuNanos();
        startJit = JitTime.millis();
        eventsAtStart = events();
    }

    /** The CQ events taken so far, by either loop. */
    private long events() {
        return hybrid == null ? loopEvents : hybrid.events();
    }

    /** The CPU time of the whole JVM (every thread: the loop, the JIT, the GC), in ns. */
    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
            .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** Counts {@code ne} polled completions, refills receives, sends when the last send and a receive are done. */
    private void handle(int ne) {
        for (int i = 0; i < ne; i++) {
            if (wcs.status(i) != 0) {
                throw new IllegalStateException("work completion failed: " + wcs.get(i).statusText());
            }
            long wrId = wcs.wrId(i);
            if (wrId == SEND_WRID) {
                scnt++;
            } else {
                if (--routs <= 1) {
                    routs += postReceives(RX_DEPTH - routs);
                }
                rcnt++;
            }
            pending &= ~wrId;
            if (scnt < limit && pending == 0) {
                long t4 = PROFILE ? System.nanoTime() : 0;
                qp.postSend(buffer, 0, size, SEND_WRID, true);
                if (PROFILE && start != 0) {
                    profile.send(t4, System.nanoTime());
                }
                pending = RECV_WRID | SEND_WRID;
            }
        }
    }

    public static void main(String[] args) throws InterruptedException {
        boolean client = args.length == 6 && args[0].equals("client");
        if (!client && !(args.length == 5 && args[0].equals("server"))) {
            System.err.println("usage: RcPingPong server PORT SIZE ITERS WARMUP | client ADDRESS PORT SIZE ITERS WARMUP");
            System.exit(2);
        }
        int a = client ? 2 : 1;
        int port = Integer.parseInt(args[a]);
        int size = Integer.parseInt(args[a + 1]);
        int iters = Integer.parseInt(args[a + 2]);
        int warmup = Integer.parseInt(args[a + 3]);
        try (EventChannel events = EventChannel.create()) {
            CmId id;
            DeviceContext context;
            RcPingPong pp;
            if (client) {
                id = events.createId(PortSpace.TCP);
                id.resolveAddress(null, new InetSocketAddress(args[1], port), TIMEOUT);
                expect(events, CmEventType.ADDR_RESOLVED);
                id.resolveRoute(TIMEOUT);
                expect(events, CmEventType.ROUTE_RESOLVED);
                context = id.openDeviceContext();
                pp = new RcPingPong(true, id, context, size);
                id.connect(ConnectionParameters.defaults());
            } else {
                CmId listener = events.createId(PortSpace.TCP);
                listener.bind(new InetSocketAddress("0.0.0.0", port));
                listener.listen(1);
                if (!events.awaitEvent(Duration.ofSeconds(60))) {
                    throw new IllegalStateException("no client within 60 s");
                }
                id = expect(events, CmEventType.CONNECT_REQUEST).id();
                context = id.openDeviceContext();
                pp = new RcPingPong(false, id, context, size);
                id.accept(ConnectionParameters.defaults());
            }
            expect(events, CmEventType.ESTABLISHED);
            double seconds = pp.run(warmup, iters);
            pp.cq.ackEvents();
            System.out.printf("%d bytes in %.2f seconds = %.2f Mbit/sec%n", 2L * size * iters, seconds,
                2.0 * size * iters * 8 / seconds / 1e6);
            System.out.printf("%d iters in %.2f seconds = %.2f usec/iter%n", iters, seconds, seconds * 1e6 / iters);
            if (client) {
                id.disconnect();
                expect(events, CmEventType.DISCONNECTED);
            } else {
                expect(events, CmEventType.DISCONNECTED);
                id.disconnect();
            }
            pp.wcs.close();
            context.close();
        }
    }
}
