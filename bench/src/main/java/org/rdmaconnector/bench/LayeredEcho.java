package org.rdmaconnector.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
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
 * back. The first {@code WARMUP} messages are untimed.
 * Usage: {@code LayeredEcho server raw|connector|unsignaled PORT SIZE WINDOW COUNT WARMUP} and
 * {@code LayeredEcho client raw|connector|unsignaled|felix ADDRESS PORT SIZE WINDOW COUNT WARMUP}.
 */
public final class LayeredEcho {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    // got once: ManagementFactory's look-up allocates at each call (a server's listener asks it per message)
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
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

    /** Round trips of the timed messages, and the client's CPU over them. */
    private static final class Timings {
        private final long[] roundTrips;
        private final int warmup;
        private long start;
        private long end;
        private long startCpu;
        private long endCpu;
        private long startJit = -1;
        private long jit = -1;

        Timings(int count, int warmup) {
            this.roundTrips = new long[count - warmup];
            this.warmup = warmup;
        }

        void answered(int message, long roundTrip) {
            if (message == warmup) {
                start = System.nanoTime();
                startCpu = processCpuNanos();
                startJit = JitTime.millis();
            }
            if (message >= warmup) {
                roundTrips[message - warmup] = roundTrip;
            }
        }

        void done() {
            end = System.nanoTime();
            endCpu = processCpuNanos();
            jit = JitTime.since(startJit);
        }

        void print(String layer, int size, int window) {
            long[] sorted = roundTrips.clone();
            Arrays.sort(sorted);
            int n = sorted.length;
            System.out.printf("result layer=%s size=%d window=%d messages=%d msgs/s=%.1f p50=%.1f p99=%.1f "
                    + "cpu=%.1f jit=%d%n", layer, size, window, n, n / ((end - start) / 1e9), sorted[n / 2] / 1e3,
                sorted[Math.min(n - 1, (int) (n * 0.99))] / 1e3, (endCpu - startCpu) / 1e3 / n, jit);
            System.out.println("(p50, p99: round trip in us; cpu: the client JVM's CPU time per message in us; jit: "
                + "ms its compilers worked in the timed part)");
        }
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
                byName.merge(info.getThreadName().replaceAll("[0-9]+", "N"), bytes, Long::sum);
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
     * Counts echoed messages on the server and the bytes allocated over the timed ones. With
     * {@code -Dlayered.jfr=FILE}, JFR samples the allocations of the timed part alone (every sample, no throttle),
     * written to {@code FILE} at its end: {@code jfr view allocation-by-class FILE} shows what the path allocates.
     */
    private static final class ServerCount {
        private static final String JFR_FILE = System.getProperty("layered.jfr");
        private final int count;
        private final int warmup;
        private final AtomicLong echoed = new AtomicLong();
        // the last message echoed, or the peer gone; then the report of the last message, once written
        private final CountDownLatch done = new CountDownLatch(1);
        private final CountDownLatch reported = new CountDownLatch(1);
        private volatile Map<Long, Long> startBytes;
        // what the listener itself allocated in the timed part (its reply's WorkRequest), when it says
        private final AtomicLong listenerBytes = new AtomicLong();
        private volatile Recording recording;
        // samples from the warm-up's second half on, not kept: a thread's sample weighs the bytes since its last
        // one, so the first in the timed part would weigh the thread's whole warm-up
        private volatile Recording primer;

        ServerCount(int count, int warmup) {
            this.count = count;
            this.warmup = warmup;
            if (JFR_FILE != null) {
                FlightRecorder.getFlightRecorder(); // JFR starts up now, not in the timed part
                recording = allocationSamples();
                primer = allocationSamples();
            }
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
            if (startBytes != null) {
                listenerBytes.addAndGet(ownBytes);
            }
            echoed();
        }

        void echoed() {
            long n = echoed.incrementAndGet();
            if (n == warmup / 2 && primer != null) {
                primer.start();
            } else if (n == warmup) {
                Recording r = recording;
                if (r != null) {
                    r.start();
                    primer.close();
                }
                startBytes = allocatedBytes();
            } else if (n == count) {
                Map<Long, Long> endBytes = allocatedBytes(); // before stopping JFR, which allocates itself
                Recording r = recording;
                if (r != null) {
                    r.stop(); // then: the peer, given its last echo, disconnects and the server shuts down
                }
                printAllocation(startBytes, endBytes, count - warmup, listenerBytes.get());
                if (r != null) {
                    try (r) {
                        r.dump(Path.of(JFR_FILE));
                    } catch (IOException e) {
                        System.out.println("cannot write " + JFR_FILE + ": " + e);
                    }
                }
                reported.countDown();
                done.countDown();
            }
        }

        /** Waits until the last message is echoed or the peer is gone, and the last message's report is written. */
        void await() throws InterruptedException {
            done.await();
            if (echoed.get() >= count) { // the peer's disconnect may come while the report is being written
                reported.await(60, TimeUnit.SECONDS);
            }
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
        Timings timings = new Timings(count, warmup);
        try (ConnectorRuntime runtime = ConnectorRuntime.standalone("layered-client", 1);
             ChannelSet set = ChannelSet.open(new ChannelSettings(System.getProperty("layered.device", "rxe0"), 1,
                 4 * window + 4, 0, window, window, 0, 1 << 24), runtime.devices(), busyPolling(runtime))) {
            RdmaEndpoint endpoint = set.connect(server, TIMEOUT);
            byte[] message = new byte[size];
            ArrayDeque<WorkRequest> receives = new ArrayDeque<>();
            ArrayDeque<WorkRequest> sends = new ArrayDeque<>();
            long[] sentAt = new long[count];
            int sent = 0;
            for (; sent < window && sent < count; sent++) {
                receives.add(endpoint.receive());
                sentAt[sent] = System.nanoTime();
                sends.add(endpoint.send(message));
            }
            for (int answered = 0; answered < count; answered++) {
                WorkRequest answer = receives.poll();
                if (answer.await(TIMEOUT) == null || !answer.result().isSuccess()) {
                    throw new IllegalStateException("answer " + answered + ": " + answer);
                }
                timings.answered(answered, System.nanoTime() - sentAt[answered]);
                if (sent < count) {
                    WorkRequest oldest = sends.poll(); // its slot is free once it completed
                    if (oldest.await(TIMEOUT) == null) {
                        throw new IllegalStateException("send not completed: " + oldest);
                    }
                    receives.add(endpoint.receive());
                    sentAt[sent++] = System.nanoTime();
                    sends.add(endpoint.send(message));
                }
            }
            timings.done();
            endpoint.close();
        }
        return timings;
    }

    private static void connectorServer(int port, int size, int window, int count, int warmup,
                                        boolean signaledEcho) throws InterruptedException {
        ServerCount served = new ServerCount(count, warmup);
        // each delivery thread echoes from an array of its own: copyData and a slice, no copy of the message per echo
        ThreadLocal<byte[]> own = ThreadLocal.withInitial(() -> new byte[Math.max(size, 64)]);
        try (ConnectorRuntime runtime = ConnectorRuntime.standalone("layered-server", 2)) {
            busyPolling(runtime);
            Activation activation = runtime.hub().activate(ListenerSettings.of("0.0.0.0", port, null, null, null,
                Math.max(16, 2 * window), Math.max(size, 64), 8), new PlainSink("echo", event -> {
                    if (event.type() == CmEventType.DISCONNECTED) {
                        served.done.countDown();
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

    private static Timings rawClient(InetSocketAddress server, int size, int window, int count, int warmup) {
        Timings timings = new Timings(count, warmup);
        try (EventChannel events = EventChannel.create()) {
            CmId id = events.createId(PortSpace.TCP);
            id.resolveAddress(null, server, TIMEOUT);
            RcPingPong.expect(events, CmEventType.ADDR_RESOLVED);
            id.resolveRoute(TIMEOUT);
            RcPingPong.expect(events, CmEventType.ROUTE_RESOLVED);
            try (RawSide side = new RawSide(id, size, window)) {
                id.connect(ConnectionParameters.defaults());
                RcPingPong.expect(events, CmEventType.ESTABLISHED);
                long[] sentAt = new long[count];
                int sent = 0;
                for (; sent < window && sent < count; sent++) {
                    side.qp.postReceive(side.buffer, sent * size, size, sent);
                    sentAt[sent] = System.nanoTime();
                    side.qp.postSend(side.buffer, (window + sent) * size, size, SEND + sent, true);
                }
                int answered = 0;
                int freeSends = 0;
                while (answered < count) {
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
                    // RC completes in order: a send slot is free once as many sends as answers completed
                    while (sent < count && freeSends > 0 && sent - answered < window) {
                        int slot = sent % window;
                        sentAt[sent++] = System.nanoTime();
                        side.qp.postSend(side.buffer, (window + slot) * size, size, SEND + slot, true);
                        freeSends--;
                    }
                }
                timings.done();
                id.disconnect();
                RcPingPong.expect(events, CmEventType.DISCONNECTED);
            }
        }
        return timings;
    }

    private static void rawServer(int port, int size, int window, int count, int warmup) {
        ServerCount served = new ServerCount(count, warmup);
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
                RcPingPong.expect(events, CmEventType.DISCONNECTED);
                id.disconnect();
            }
        }
    }
}
