package org.rdmaconnector.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ConnectorRuntime;
import org.rdmaconnector.connector.spi.ListenerSettings;
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
import org.rdmaconnector.verbs.RnrTimer;
import org.rdmaconnector.verbs.WorkCompletions;
import org.rdmaconnector.verbs.engine.EventEngine;

/**
 * The layered echo benchmark (issue 14, goal 3), layers (a) and (b): the same echo workload, {@code SIZE}-byte
 * messages with {@code WINDOW} outstanding, through
 * <ul>
 * <li>{@code raw}: rdma-native's verbs, one thread per side polling the CQ with the engine's hybrid strategy (busy
 *     poll for {@code -Dlayered.busyPollMicros}, default the engine's 50 us, then arm and wait);
 * <li>{@code connector}: the connector's API, a client channel set ({@link ChannelSet}, what a pool lends) and an
 *     echo listener through the hub ({@link ConnectorRuntime}), a plain-Java listener ({@link PlainSink}) that
 *     copies each message into an array of its delivery thread's ({@code copyData}) and echoes a slice of it; both
 *     engines busy-poll for the same budget;
 * <li>{@code unsignaled}: as {@code connector}, with the listener's echoes sent unsignaled (selective signaling):
 *     the listener is given each message and not each echo's send completion, one delivery per message instead of
 *     two; what an application that need not see its sends complete can choose.
 * </ul>
 * Layer (c), an OSGi whiteboard listener in Felix, has its server in the it/felix test jar ({@code FelixEchoServer});
 * {@code client felix} is the connector's client against it. Layer (d), WildFly's MDBs, is {@code client connector}
 * against the example's echo service deployed with the rar ({@code bench/vm-bench.sh} starts them).
 * The client prints messages/s, the round trip's p50 and p99, and its CPU time per message; the server prints the
 * bytes its JVM allocated per echoed message over the timed part (every thread), from the CQ to the listener and
 * back. Both sides print the JIT's work in the timed part, what each thread did per message ({@link ThreadSchedule})
 * and, on the connector, who read the engine's events (the loop, or the thread that awaited or delivered them) and
 * how often the loop polled a source in vain beside them (its busy polls). With {@code -Dlayered.system=true} the
 * server also prints the other processes' busiest threads, kernel threads included (softirq, the driver's work). The
 * first {@code WARMUP} messages are untimed; the client pauses twice near their end until its JIT is idle, and then
 * the server's, which it asks over TCP at the server's port plus 10000 ({@code Timings}).
 * Usage: {@code LayeredEcho server raw|connector|unsignaled PORT SIZE WINDOW COUNT WARMUP} and
 * {@code LayeredEcho client raw|connector|unsignaled|felix ADDRESS PORT SIZE WINDOW COUNT WARMUP}.
 */
public final class LayeredEcho {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    // the server's JIT gate listens on TCP at its RDMA port plus this (Timings.awaitJits)
    private static final int JIT_GATE_OFFSET = 10000;
    // got once: ManagementFactory's look-up allocates at each call (a server's listener asks it per message)
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final long QUIET_MILLIS = Long.getLong("layered.quietMillis", 1000);
    private static final long BUSY_POLL_NANOS = Long.getLong("layered.busyPollMicros",
        EventEngine.DEFAULT_BUSY_POLL_MICROS) * 1000;

    private LayeredEcho() {
    }

    public static void main(String[] args) throws Exception {
        boolean client = args.length == 8 && args[0].equals("client");
        if (!client && !(args.length == 7 && args[0].equals("server"))
            || !Arrays.asList(client ? new String[] {"raw", "connector", "unsignaled", "felix"}
                : new String[] {"raw", "connector", "unsignaled"}).contains(args[1])) {
            System.err.println("usage: LayeredEcho server raw|connector|unsignaled PORT SIZE WINDOW COUNT WARMUP"
                + " | client raw|connector|unsignaled|felix ADDRESS PORT SIZE WINDOW COUNT WARMUP");
            System.exit(2);
        }
        boolean raw = args[1].equals("raw");
        int a = client ? 3 : 2;
        int port = Integer.parseInt(args[a]);
        int size = Integer.parseInt(args[a + 1]);
        int window = Integer.parseInt(args[a + 2]);
        int count = Integer.parseInt(args[a + 3]);
        int warmup = Integer.parseInt(args[a + 4]);
        if (client) {
            InetSocketAddress server = new InetSocketAddress(args[2], port);
            Timings timings = raw ? rawClient(server, size, window, count, warmup)
                : connectorClient(server, size, window, count, warmup);
            timings.print(args[1], size, window);
        } else if (raw) {
            rawServer(port, size, window, count, warmup);
        } else {
            connectorServer(port, size, window, count, warmup, !args[1].equals("unsignaled"));
        }
    }

    /**
     * Round trips of every message, and the client's CPU, JIT, threads and engine over the timed ones. A client runs
     * its loop in parts, {@link #warmUp} and then the timed part ({@link #startTimed()} between them), so the
     * compiled loop never meets a branch its warm-up did not take (an uncommon trap there deoptimized it and made the
     * JIT compile it again in the timed part); what the snapshots need is loaded before the warm-up (a class loaded
     * at the boundary invalidated code compiled on the assumption that it did not exist): BENCHMARKS.md, "Which
     * threads run per message".
     */
    private static final class Timings extends Watched {
        private final long[] roundTrips;
        private final int warmup;
        private long start;
        private long end;
        private long startCpu;
        private long endCpu;
        private Snapshot first;
        private Snapshot last;
        private long waitedForJit;
        private long waitedForServerJit;
        // the server's JIT gate, until it refused a connection
        private InetSocketAddress jitGate;

        Timings(int count, int warmup, InetSocketAddress server) {
            this.roundTrips = new long[count];
            this.warmup = warmup;
            this.jitGate = new InetSocketAddress(server.getAddress(), server.getPort() + JIT_GATE_OFFSET);
            primeSnapshots();
        }

        /**
         * Waits until this JVM's compilers are idle, then until the server's are: it asks the server's JIT gate (a
         * TCP port, {@link ServerCount}), which answers once they are. A server without one (Felix's, WildFly's)
         * refuses the connection, and the client waits for its own alone from then on.
         */
        private void awaitJits() throws InterruptedException {
            if (QUIET_MILLIS <= 0) {
                return;
            }
            waitedForJit += JitTime.awaitQuiet(QUIET_MILLIS);
            if (jitGate == null) {
                return;
            }
            long start = System.nanoTime();
            try (Socket socket = new Socket()) {
                socket.connect(jitGate, 10_000);
                socket.setSoTimeout(120_000);
                if (socket.getInputStream().read() < 0) {
                    throw new IOException("closed without an answer");
                }
            } catch (IOException e) {
                System.out.println("no JIT gate at " + jitGate + " (" + e.getMessage() + "): the client waits for its "
                    + "own JIT alone");
                jitGate = null;
            }
            waitedForServerJit += (System.nanoTime() - start) / 1_000_000L;
        }

        /**
         * Runs {@code loop}'s warm-up in parts ({@link JitTime#warmUp}). After each, with no message outstanding, it
         * waits until this JVM's compilers, and then the server's, have been idle for {@code -Dlayered.quietMillis}
         * (default 1000; 0 does not wait), so that the timed part does not share a pinned vCPU with a compile queue
         * still draining (the server starts its own timed part before it answers the last).
         */
        void warmUp(JitTime.Part loop) throws InterruptedException {
            JitTime.warmUp(warmup, loop, this::awaitJits);
        }

        /** Starts the clock, and the snapshots, of the timed part. */
        void startTimed() {
            first = Snapshot.take(engine);
            startCpu = processCpuNanos();
            start = System.nanoTime();
        }

        void answered(int message, long roundTrip) {
            roundTrips[message] = roundTrip;
        }

        void done() {
            end = System.nanoTime();
            endCpu = processCpuNanos();
            last = Snapshot.take(engine);
        }

        void print(String layer, int size, int window) {
            long[] sorted = Arrays.copyOfRange(roundTrips, warmup, roundTrips.length);
            Arrays.sort(sorted);
            int n = sorted.length;
            System.out.printf("result layer=%s size=%d window=%d messages=%d msgs/s=%.1f p50=%.1f p99=%.1f "
                    + "cpu=%.1f jit=%d max=%.1f%n", layer, size, window, n, n / ((end - start) / 1e9),
                sorted[n / 2] / 1e3, sorted[Math.min(n - 1, (int) (n * 0.99))] / 1e3, (endCpu - startCpu) / 1e3 / n,
                last.jitSince(first), sorted[n - 1] / 1e3);
            System.out.println("(p50, p99, max: round trip in us; cpu: the client JVM's CPU time per message in us; "
                + "jit: ms its compilers worked in the timed part)");
            System.out.printf("waited %d ms in all, during and after the warm-up, for the client's JIT to go quiet, "
                + "then %d ms for the server's; the timed part ran from %d to %d ms of the JVM's uptime%n",
                waitedForJit, waitedForServerJit, first.uptime, last.uptime);
            last.print("client", first, n);
        }
    }

    /** A side that reports, with the rest, what the registrations of its engine read in the timed part. */
    private abstract static class Watched {
        volatile EventEngine engine;

        /** Watches {@code engine}, and returns it. */
        EventEngine watch(EventEngine engine) {
            this.engine = engine;
            Snapshot.take(engine); // what it reads is loaded before the warm-up, as primeSnapshots does
            return engine;
        }
    }

    /**
     * One side's figures at one end of the timed part: its threads' schedule, the ms its compilers worked so far, the
     * JVM's uptime in ms (where the end lies in -Xlog or -XX:+PrintCompilation output) and what the registrations of
     * its engine read ({@link #engineCounts}).
     */
    private static final class Snapshot {
        final ThreadSchedule schedule;
        final Map<String, long[]> engine;
        final long jit;
        final long uptime;

        private Snapshot(ThreadSchedule schedule, Map<String, long[]> engine, long jit, long uptime) {
            this.schedule = schedule;
            this.engine = engine;
            this.jit = jit;
            this.uptime = uptime;
        }

        static Snapshot take(EventEngine engine) {
            return new Snapshot(ThreadSchedule.take(), engineCounts(engine), JitTime.millis(), uptimeMillis());
        }

        /** The ms the compilers worked from {@code start} to this one, or -1 where the JVM does not say. */
        long jitSince(Snapshot start) {
            return JitTime.between(start.jit, jit);
        }

        /** Prints, per message, what each thread and each registration did from {@code start} to this one. */
        void print(String side, Snapshot start, int messages) {
            schedule.print(side, start.schedule, messages);
            printEngineCounts(side, start.engine, engine, messages);
        }
    }

    /** Loads and runs once, before the warm-up, what the snapshots at the timed part's ends use. */
    private static void primeSnapshots() {
        Snapshot.take(null);
        processCpuNanos();
        allocatedBytes();
    }

    /** The JVM's uptime in ms (the time stamps of -Xlog's uptime and of -XX:+PrintCompilation). */
    private static long uptimeMillis() {
        return ManagementFactory.getRuntimeMXBean().getUptime();
    }

    /** The whole JVM's CPU time (every thread), in ns. */
    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    }

    /** Bytes allocated so far by each live thread of the JVM, by thread id. */
    private static Map<Long, Long> allocatedBytes() {
        long[] ids = THREADS.getAllThreadIds();
        long[] bytes = THREADS.getThreadAllocatedBytes(ids);
        Map<Long, Long> byThread = new HashMap<>();
        for (int i = 0; i < ids.length; i++) {
            byThread.put(ids[i], Math.max(0, bytes[i]));
        }
        return byThread;
    }

    /**
     * Prints the bytes per message allocated from {@code start} to {@code now}: in all, and by each thread that
     * allocated; and the part the listener's own calls allocated, when it counted them.
     */
    private static void printAllocation(Map<Long, Long> start, Map<Long, Long> now, int messages,
                                        long listenerBytes) {
        Map<String, Long> byName = new TreeMap<>();
        long sum = 0;
        for (Map.Entry<Long, Long> entry : now.entrySet()) {
            long bytes = entry.getValue() - start.getOrDefault(entry.getKey(), 0L);
            java.lang.management.ThreadInfo info = THREADS.getThreadInfo(entry.getKey());
            if (bytes > 0 && info != null) {
                byName.merge(ThreadSchedule.poolName(info.getThreadName()), bytes, Long::sum);
            }
            sum += Math.max(0, bytes);
        }
        System.out.printf("server allocated %.1f B/msg over %d messages (every thread of the JVM, from the CQ to the "
            + "listener and its echo back)%n", (double) sum / messages, messages);
        byName.forEach((name, bytes) -> System.out.printf("  thread %-40s %8.1f B/msg%n", name,
            (double) bytes / messages));
        if (listenerBytes > 0) {
            System.out.printf("  of which the listener's own call (its reply) %.1f B/msg; the rest, from the CQ to the "
                + "listener, %.1f B/msg%n", (double) listenerBytes / messages,
                (double) (sum - listenerBytes) / messages);
        }
    }

    /**
     * What an engine's registrations read, at one moment: events in all, and those read by a thread that awaited
     * them or polled after its delivery (not the loop), by registration name (digits as N).
     */
    private static Map<String, long[]> engineCounts(EventEngine engine) {
        Map<String, long[]> byName = new TreeMap<>();
        if (engine != null) {
            for (org.rdmaconnector.verbs.engine.Registration r : engine.registrations()) {
                String name = ThreadSchedule.poolName(r.name());
                long[] sum = byName.get(name); // no lambda: nothing is linked at the boundary (see Timings)
                if (sum == null) {
                    byName.put(name, sum = new long[3]);
                }
                sum[0] += r.eventsRead();
                sum[1] += r.eventsReadByWaiters();
                sum[2] += r.busyPolls();
            }
        }
        return byName;
    }

    /** Prints the events each registration read between two {@link #engineCounts} snapshots, per message. */
    private static void printEngineCounts(String side, Map<String, long[]> start, Map<String, long[]> end,
                                          int messages) {
        end.forEach((name, now) -> {
            long[] before = start.getOrDefault(name, new long[3]);
            if (now[0] > before[0]) {
                System.out.printf("%s engine: %s read %.3f events/msg, %.3f of them by the awaiting or delivering "
                    + "thread (not the loop); the loop's empty busy polls %.3f/msg%n", side, name,
                    (double) (now[0] - before[0]) / messages, (double) (now[1] - before[1]) / messages,
                    (double) (now[2] - before[2]) / messages);
            }
        });
    }

    /**
     * Counts echoed messages on the server, and reports the bytes allocated, the JIT's work and the threads' schedule
     * over the timed ones. The echo path only counts, so that the compiled path has no branch first taken at the
     * boundary (see {@link Timings}); other threads take the snapshots. At the start, the JIT gate
     * ({@link #openJitGate}) does, before it answers the client's last wait (a client that does not ask: a thread of
     * its own, {@code layered-watch}, looking at the count every 50 ms, once it sees the traffic resumed, and the
     * report says so); at the end, that thread wakes when the peer disconnects (or the raw server echoed the last
     * message). Neither runs in the timed part. With {@code -Dlayered.jfr=FILE}, JFR samples the allocations of
     * the timed part alone (every sample, no throttle), written to {@code FILE} at its end:
     * {@code jfr view allocation-by-class FILE} shows what the path allocates.
     */
    private static final class ServerCount extends Watched {
        private static final String JFR_FILE = System.getProperty("layered.jfr");
        private static final boolean SYSTEM = Boolean.getBoolean("layered.system");
        private final int count;
        private final int warmup;
        private final AtomicLong echoed = new AtomicLong();
        // what the listener itself allocated (its reply's WorkRequest), when it says
        private final AtomicLong listenerBytes = new AtomicLong();
        // the peer gone
        private final CountDownLatch gone = new CountDownLatch(1);
        // the watcher ended: the report is written, or there is none
        private final CountDownLatch finished = new CountDownLatch(1);
        private final Thread watcher;
        // the JIT gate's, if it opened
        private volatile Thread gateThread;
        private Recording recording;
        // the timed part's start (startTimedPart): the count then, and the snapshots
        private long first = -1;
        private Map<Long, Long> startBytes;
        private Snapshot firstSnapshot;
        // with -Dlayered.system=true: every other process's threads, kernel threads included
        private ThreadSchedule startSystem;
        private long startListenerBytes;
        // samples from the warm-up's second half on, not kept: a thread's sample weighs the bytes since its last
        // one, so the first in the timed part would weigh the thread's whole warm-up
        private Recording primer;

        ServerCount(int count, int warmup, int port) {
            this.count = count;
            this.warmup = warmup;
            if (JFR_FILE != null) {
                FlightRecorder.getFlightRecorder(); // JFR starts up now, not in the timed part
                recording = allocationSamples();
                primer = allocationSamples();
            }
            primeSnapshots();
            if (SYSTEM) {
                ThreadSchedule.takeSystem();
            }
            watcher = new Thread(this::awaitAndReport, "layered-watch");
            watcher.setDaemon(true);
            watcher.start();
            openJitGate(port + JIT_GATE_OFFSET); // last: its thread reads what the lines above set
        }

        /**
         * The JIT gate: a TCP port at which the client, in its pauses, asks whether this JVM's compilers are idle;
         * the answer (one byte) comes once they are ({@code Timings.awaitJits}). Its thread runs only then; before
         * its answer at the warm-up's end it starts the timed part, so that its own wait is not in it.
         */
        private void openJitGate(int port) {
            ServerSocket gate;
            try {
                gate = new ServerSocket(port);
            } catch (IOException e) {
                System.out.println("no JIT gate on TCP port " + port + " (" + e.getMessage() + "): the client waits "
                    + "for its own JIT alone");
                return;
            }
            Thread thread = new Thread(() -> {
                try (gate) {
                    while (true) {
                        try (Socket client = gate.accept()) {
                            JitTime.awaitQuiet(QUIET_MILLIS);
                            startTimedPart(); // the client asks last at the warm-up's end: the traffic resumes now
                            client.getOutputStream().write(1);
                        }
                    }
                } catch (IOException e) {
                    System.out.println("the JIT gate closed: " + e.getMessage());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "layered-jit-gate");
            thread.setDaemon(true);
            thread.start();
            gateThread = thread;
        }

        private static Recording allocationSamples() {
            Recording r = new Recording();
            r.enable("jdk.ObjectAllocationSample").with("throttle", "off").withStackTrace();
            return r;
        }

        /** Bytes the calling thread has allocated so far (allocating nothing). */
        static long threadBytes() {
            return THREADS.getCurrentThreadAllocatedBytes();
        }

        /** A message echoed by a listener that allocated {@code ownBytes} itself (its reply) in its call. */
        void echoed(long ownBytes) {
            listenerBytes.addAndGet(ownBytes);
            echoed.incrementAndGet();
        }

        void echoed() {
            echoed.incrementAndGet();
        }

        /** The peer disconnected (after its last answer), or the server echoed its last message. */
        void peerGone() {
            gone.countDown();
        }

        // The timed part's start, once the count reached the warm-up's end: by the JIT gate before it answers the
        // client's last wait (then the traffic resumes), or by the watcher once it sees the traffic resumed without
        // it (a client that did not ask)
        private synchronized void startTimedPart() {
            long n = echoed.get();
            if (first >= 0 || n < warmup) {
                return;
            }
            first = n;
            if (recording != null) {
                recording.start();
                primer.close();
            }
            startSystem = SYSTEM ? ThreadSchedule.takeSystem() : null; // first: reading all of /proc takes a while
            firstSnapshot = Snapshot.take(engine);
            startListenerBytes = listenerBytes.get();
            startBytes = allocatedBytes(); // last: the snapshots above allocate
        }

        private void awaitAndReport() {
            try {
                boolean primed = false;
                long n;
                // until the timed part starts: a look every 50 ms; then the peer's disconnect, after its last
                // answer, ends it: this thread does not run in the timed part
                while (!started() && (n = echoed.get()) < count && !gone.await(50, TimeUnit.MILLISECONDS)) {
                    if (primer != null && !primed && n >= warmup / 2) {
                        primer.start();
                        primed = true;
                    }
                    if (n > warmup) {
                        startTimedPart();
                    }
                }
                gone.await(5, TimeUnit.MINUTES);
                n = echoed.get();
                if (!started() || n < count) {
                    return; // the peer left before the timed part ended: no report
                }
                Map<Long, Long> endBytes = allocatedBytes(); // before stopping JFR, which allocates itself
                Snapshot last = Snapshot.take(engine);
                ThreadSchedule endSystem = startSystem == null ? null : ThreadSchedule.takeSystem();
                endBytes.remove(watcher.getId()); // the harness's threads: not the echo's
                if (gateThread != null) {
                    endBytes.remove(gateThread.getId());
                }
                int messages = (int) (n - first);
                if (first != warmup) {
                    System.out.printf("the timed part began at message %d, not %d: the client did not ask the JIT "
                        + "gate%n", first, warmup);
                }
                printAllocation(startBytes, endBytes, messages, listenerBytes.get() - startListenerBytes);
                System.out.printf("server JIT: %d ms in the timed part, from %d to %d ms of the JVM's uptime (its end: "
                    + "the peer's disconnect)%n", last.jitSince(firstSnapshot), firstSnapshot.uptime, last.uptime);
                last.print("server", firstSnapshot, messages);
                if (endSystem != null) {
                    endSystem.print("other processes' (busiest 15)", startSystem, messages);
                }
                if (recording != null) {
                    try (Recording r = recording) {
                        r.stop();
                        r.dump(Path.of(JFR_FILE));
                    } catch (IOException e) {
                        System.out.println("cannot write " + JFR_FILE + ": " + e);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                finished.countDown();
            }
        }

        private synchronized boolean started() {
            return first >= 0;
        }

        /** Waits until the last message is echoed or the peer is gone, and the report, if any, is written. */
        void await() throws InterruptedException {
            finished.await();
        }
    }

    /** The runtime's engine, set to the busy-poll budget of this run. */
    private static EventEngine busyPolling(ConnectorRuntime runtime) {
        runtime.engine().setBusyPoll(Duration.ofNanos(BUSY_POLL_NANOS));
        return runtime.engine();
    }

    // ---- (b) the connector: a channel set's endpoint against an echo listener through the hub ----

    private static Timings connectorClient(InetSocketAddress server, int size, int window, int count, int warmup)
        throws InterruptedException {
        Timings timings = new Timings(count, warmup, server);
        try (ConnectorRuntime runtime = ConnectorRuntime.standalone("cli", 1);
             ChannelSet set = ChannelSet.open(new ChannelSettings(System.getProperty("layered.device", "rxe0"), 1,
                 4 * window + 4, 0, window, window, 0, 1 << 24), runtime.devices(),
                 timings.watch(busyPolling(runtime)))) {
            RdmaEndpoint endpoint = set.connect(server, TIMEOUT);
            ConnectorLoop loop = new ConnectorLoop(endpoint, new byte[size], window, count, timings);
            timings.warmUp(loop);
            timings.startTimed();
            loop.run(count);
            timings.done();
            endpoint.close();
        }
        return timings;
    }

    /** The connector client's echo loop, run for the warm-up and then for the timed part (see {@link Timings}). */
    private static final class ConnectorLoop implements JitTime.Part {
        private final RdmaEndpoint endpoint;
        private final byte[] message;
        private final int window;
        private final Timings timings;
        private final ArrayDeque<WorkRequest> receives = new ArrayDeque<>();
        private final ArrayDeque<WorkRequest> sends = new ArrayDeque<>();
        private final long[] sentAt;
        private int sent;
        private int answered;

        ConnectorLoop(RdmaEndpoint endpoint, byte[] message, int window, int count, Timings timings) {
            this.endpoint = endpoint;
            this.message = message;
            this.window = window;
            this.timings = timings;
            this.sentAt = new long[count];
        }

        @Override
        public void run(int until) throws InterruptedException {
            while (answered < until) {
                while (sent < until && sent - answered < window) {
                    if (sends.size() == window) {
                        WorkRequest oldest = sends.poll(); // its slot is free once it completed
                        if (oldest.await(TIMEOUT) == null) {
                            throw new IllegalStateException("send not completed: " + oldest);
                        }
                    }
                    receives.add(endpoint.receive());
                    sentAt[sent++] = System.nanoTime();
                    sends.add(endpoint.send(message));
                }
                WorkRequest answer = receives.poll();
                if (answer.await(TIMEOUT) == null || !answer.result().isSuccess()) {
                    throw new IllegalStateException("answer " + answered + ": " + answer);
                }
                timings.answered(answered, System.nanoTime() - sentAt[answered]);
                answered++;
            }
        }
    }

    private static void connectorServer(int port, int size, int window, int count, int warmup,
                                        boolean signaledEcho) throws InterruptedException {
        ServerCount served = new ServerCount(count, warmup, port);
        // each delivery thread echoes from an array of its own: copyData and a slice, no copy of the message per echo
        ThreadLocal<byte[]> own = ThreadLocal.withInitial(() -> new byte[Math.max(size, 64)]);
        try (ConnectorRuntime runtime = ConnectorRuntime.standalone("srv", 2)) {
            served.watch(busyPolling(runtime));
            Activation activation = runtime.hub().activate(ListenerSettings.of("0.0.0.0", port, null, null, null,
                Math.max(16, 2 * window), Math.max(size, 64), 8), new PlainSink("echo", event -> {
                    if (event.type() == CmEventType.DISCONNECTED) {
                        served.peerGone();
                    }
                }, completion -> {
                    if (completion.isReceive() && completion.isSuccess()) {
                        long before = ServerCount.threadBytes();
                        byte[] message = own.get();
                        completion.connection().send(message, 0, completion.copyData(message, 0), signaledEcho);
                        served.echoed(ServerCount.threadBytes() - before);
                    }
                }));
            System.out.println("listening on port " + port);
            served.await();
            activation.close();
        }
    }

    // ---- (a) raw verbs: the same echo on rdma-native's verbs objects, one thread per side ----

    /** One side's verbs objects and its hybrid polling loop. */
    private static final class RawSide implements AutoCloseable {
        final CmId id;
        final DeviceContext context;
        final CompletionChannel channel;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemoryRegion buffer;
        final WorkCompletions wcs = new WorkCompletions(16);
        final int size;
        private final HybridPoll poll;

        RawSide(CmId id, int size, int window) {
            this.id = id;
            this.size = size;
            context = id.openDeviceContext();
            ProtectionDomain pd = context.allocateProtectionDomain();
            channel = context.createCompletionChannel();
            cq = context.createCompletionQueue(4 * window + 4, channel, 0);
            qp = id.createQueuePair(pd, cq, cq, QueuePairCapabilities.of(2 * window, 2 * window));
            // 2 x WINDOW slots: the client's receives and sends; the server's receives, each echoed from its slot
            // (twice the window, so a slot whose echo is still unacknowledged never leaves the client's next
            // message without a receive)
            int length = 2 * window * size;
            int pages = (length + 4095) / 4096; // alignedSlice rounds its capacity down to whole pages
            buffer = pd.register(ByteBuffer.allocateDirect((pages + 1) * 4096).alignedSlice(4096).limit(length));
            cq.requestNotify(false);
            poll = new HybridPoll(channel, cq, BUSY_POLL_NANOS);
        }

        /**
         * Once established: the connector's default RNR timer instead of the CM's 655.36 ms, so that a receive
         * posted late costs both layers the same.
         */
        void takeConnectorsRnrTimer() {
            qp.setMinRnrTimer(RnrTimer.atLeastMicros(ListenerSettings.DEFAULT_MIN_RNR_TIMER_MICROS));
        }

        /** The next batch of completions (at least one), polled with the engine's hybrid strategy. */
        int next() {
            int ne = poll.next(wcs);
            for (int i = 0; i < ne; i++) {
                if (wcs.status(i) != 0) {
                    throw new IllegalStateException("work completion failed: " + wcs.get(i).statusText());
                }
            }
            return ne;
        }

        @Override
        public void close() {
            cq.ackEvents();
            wcs.close();
            context.close();
        }
    }

    // wr ids: receives are their slot, sends their slot plus this
    private static final long SEND = 1L << 32;

    private static Timings rawClient(InetSocketAddress server, int size, int window, int count, int warmup)
        throws InterruptedException {
        Timings timings = new Timings(count, warmup, server);
        try (EventChannel events = EventChannel.create()) {
            CmId id = events.createId(PortSpace.TCP);
            id.resolveAddress(null, server, TIMEOUT);
            RcPingPong.expect(events, CmEventType.ADDR_RESOLVED);
            id.resolveRoute(TIMEOUT);
            RcPingPong.expect(events, CmEventType.ROUTE_RESOLVED);
            try (RawSide side = new RawSide(id, size, window)) {
                id.connect(ConnectionParameters.defaults());
                RcPingPong.expect(events, CmEventType.ESTABLISHED);
                side.takeConnectorsRnrTimer();
                RawLoop loop = new RawLoop(side, window, count, timings);
                timings.warmUp(loop);
                timings.startTimed();
                loop.run(count);
                timings.done();
                id.disconnect();
                RcPingPong.expect(events, CmEventType.DISCONNECTED);
            }
        }
        return timings;
    }

    /** The raw client's echo loop, run for the warm-up and then for the timed part (see {@link Timings}). */
    private static final class RawLoop implements JitTime.Part {
        private final RawSide side;
        private final int size;
        private final int window;
        private final int count;
        private final Timings timings;
        private final long[] sentAt;
        private int sent;
        private int answered;
        private int freeSends;

        RawLoop(RawSide side, int window, int count, Timings timings) {
            this.side = side;
            this.size = side.size;
            this.window = window;
            this.count = count;
            this.timings = timings;
            this.sentAt = new long[count];
            this.freeSends = window;
            for (int slot = 0; slot < window; slot++) {
                side.qp.postReceive(side.buffer, slot * size, size, slot);
            }
        }

        @Override
        public void run(int until) {
            send(until);
            while (answered < until) {
                int ne = side.next();
                for (int i = 0; i < ne; i++) {
                    long wrId = side.wcs.wrId(i);
                    if (wrId >= SEND) {
                        freeSends++;
                        continue;
                    }
                    timings.answered(answered, System.nanoTime() - sentAt[answered]);
                    answered++;
                    if (sent < count) {
                        side.qp.postReceive(side.buffer, (int) wrId * size, size, wrId);
                    }
                }
                send(until);
            }
        }

        // RC completes in order: a send slot is free once as many sends as answers completed
        private void send(int until) {
            while (sent < until && freeSends > 0 && sent - answered < window) {
                int slot = sent % window;
                sentAt[sent++] = System.nanoTime();
                side.qp.postSend(side.buffer, (window + slot) * size, size, SEND + slot, true);
                freeSends--;
            }
        }
    }

    private static void rawServer(int port, int size, int window, int count, int warmup)
        throws InterruptedException {
        ServerCount served = new ServerCount(count, warmup, port);
        try (EventChannel events = EventChannel.create()) {
            CmId listener = events.createId(PortSpace.TCP);
            listener.bind(new InetSocketAddress("0.0.0.0", port));
            listener.listen(1);
            System.out.println("listening on port " + port);
            if (!events.awaitEvent(Duration.ofSeconds(120))) {
                throw new IllegalStateException("no client within 120 s");
            }
            CmId id = RcPingPong.expect(events, CmEventType.CONNECT_REQUEST).id();
            try (RawSide side = new RawSide(id, size, window)) {
                for (int slot = 0; slot < 2 * window; slot++) {
                    side.qp.postReceive(side.buffer, slot * size, size, slot);
                }
                id.accept(ConnectionParameters.defaults());
                side.takeConnectorsRnrTimer();
                RcPingPong.expect(events, CmEventType.ESTABLISHED);
                for (int echoed = 0; echoed < count; ) {
                    int ne = side.next();
                    for (int i = 0; i < ne; i++) {
                        long wrId = side.wcs.wrId(i);
                        if (wrId >= SEND) {
                            // the echo left its slot: the slot takes the next message
                            side.qp.postReceive(side.buffer, (int) (wrId - SEND) * size, size, wrId - SEND);
                            continue;
                        }
                        side.qp.postSend(side.buffer, (int) wrId * size, side.wcs.byteLength(i), SEND + wrId, true);
                        served.echoed();
                        echoed++;
                    }
                }
                served.peerGone(); // its last message is echoed: the timed part is over
                RcPingPong.expect(events, CmEventType.DISCONNECTED);
                id.disconnect();
            }
        }
        served.await(); // the report
    }
}
