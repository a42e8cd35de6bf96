package org.rdmaconnector.bench;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.rdmaconnector.connector.ChannelSetInfo;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.InboundConnection;
import org.rdmaconnector.connector.MemoryRegion;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.RemoteAccess;
import org.rdmaconnector.connector.RemoteRegion;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ConnectorRuntime;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.verbs.engine.EventEngine;

/**
 * The connector's counterparts of perftest's {@code ib_read_lat}, {@code ib_write_lat}, {@code ib_write_bw} and
 * {@code ib_send_bw} (issue 14: one-sided operations, and goal 4), through the connector's API: a client channel set
 * ({@link ChannelSet}, what a pool lends) against a listener through the hub, each operation one
 * {@link WorkRequest}. The client first sends a hello (the test, its window and its own {@link RemoteRegion}); the
 * listener registers a region with remote read and write access and answers with its {@link RemoteRegion}.
 * <ul>
 * <li>{@code read_lat}: one RDMA READ of {@code SIZE} bytes at a time; the full round trip (as ib_read_lat reports
 *     it);</li>
 * <li>{@code write_lat}: ib_write_lat's ping-pong: the client WRITEs {@code SIZE} bytes ending in a sequence number
 *     into the listener's region, a thread on the listener's side spins on that number and WRITEs the bytes back into
 *     the client's region, where the client spins on it; half the round trip (as ib_write_lat reports it);</li>
 * <li>{@code write_bw}: RDMA WRITEs with {@code WINDOW} outstanding;</li>
 * <li>{@code send_bw}: sends from a registered region with {@code WINDOW} outstanding into the listener's receives,
 *     which its endpoint only counts.</li>
 * </ul>
 * Both sides' engines busy-poll for {@code -Dperftest.busyPollMicros} (default the engine's 50 us), which is also
 * how long a thread awaiting a request polls the client's CQ itself before it sleeps, and hold the CQ unarmed for
 * {@code -Dperftest.waiterHoldMicros} (default the engine's 5 ms) after a thread awaited it. The result line
 * ends with the client's CQ events per operation: each one woke the client's event loop. The listener takes no
 * completions of its own writes and sends ({@code DeliverSendCompletions} false): its {@code write_lat} thread awaits
 * each of its writes, as perftest's server polls its CQ for each.
 * The bandwidth tests signal one request in {@code -Dperftest.signalEvery} (default 16, at most {@code WINDOW}; 1
 * signals each), as perftest signals one in its {@code --cq-mod}: the others complete with it (selective signaling).
 * The client prints one {@code result} line: messages/s and MB/s (10^6 bytes) for the bandwidth tests, the typical
 * (median) and average latency in us for the latency tests. The first {@code WARMUP} operations are untimed.
 * Before it, what each of the client's threads did per timed operation ({@link ThreadSchedule}: CPU, waits for a
 * CPU, switches); with {@code -Dperftest.system=true} also every other task's, kernel threads included.
 * Usage: {@code ConnectorPerftest server PORT SIZE} and
 * {@code ConnectorPerftest client ADDRESS PORT read_lat|write_lat|write_bw|send_bw SIZE ITERS WARMUP WINDOW}.
 */
public final class ConnectorPerftest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Set<RemoteAccess> READ_WRITE = EnumSet.of(RemoteAccess.READ, RemoteAccess.WRITE);
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class,
        ByteOrder.nativeOrder());
    private static final int HELLO = 1 + 4 + RemoteRegion.ENCODED_LENGTH;
    private static final String[] TESTS = {"read_lat", "write_lat", "write_bw", "send_bw"};

    private ConnectorPerftest() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("server")) {
            server(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
            return;
        }
        int test = args.length == 8 && args[0].equals("client") ? Arrays.asList(TESTS).indexOf(args[3]) : -1;
        int size = test < 0 ? 0 : Integer.parseInt(args[4]);
        if (test < 0 || size < 8 || size % 8 != 0) {
            System.err.println("usage: ConnectorPerftest server PORT SIZE | client ADDRESS PORT "
                + String.join("|", TESTS) + " SIZE ITERS WARMUP WINDOW (SIZE a multiple of 8)");
            System.exit(2);
        }
        client(new InetSocketAddress(args[1], Integer.parseInt(args[2])), test, size, Integer.parseInt(args[5]),
            Integer.parseInt(args[6]), Integer.parseInt(args[7]));
    }

    /**
     * The runtime's engine with the busy-poll budget {@code -Dperftest.busyPollMicros} and the waiter hold
     * {@code -Dperftest.waiterHoldMicros} (defaults the engine's).
     */
    private static EventEngine busyPolling(ConnectorRuntime runtime) {
        runtime.engine().setBusyPoll(Duration.ofNanos(1000 * Long.getLong("perftest.busyPollMicros",
            EventEngine.DEFAULT_BUSY_POLL_MICROS)));
        runtime.engine().setWaiterHold(Duration.ofNanos(1000 * Long.getLong("perftest.waiterHoldMicros",
            EventEngine.DEFAULT_WAITER_HOLD.toNanos() / 1000)));
        return runtime.engine();
    }

    /** The sequence number at the end of the {@code size} bytes at {@code offset}, read as the device left it. */
    private static long sequenceAt(ByteBuffer buffer, int offset, int size) {
        return (long) LONGS.getVolatile(buffer, offset + size - 8);
    }

    // ---- the client ----

    private static void client(InetSocketAddress server, int test, int size, int iters, int warmup, int window)
        throws InterruptedException {
        int depth = Math.max(window, 1);
        int signalEvery = Math.max(1, Math.min(depth, Integer.getInteger("perftest.signalEvery", 16)));
        try (ConnectorRuntime runtime = ConnectorRuntime.standalone("perftest-client", 1);
             ChannelSet set = ChannelSet.open(new ChannelSettings(System.getProperty("perftest.device", "rxe0"), 1,
                 4 * depth + 8, 0, depth + 2, 4, 0, 1 << 24), runtime.devices(), busyPolling(runtime))) {
            // the source of every operation at [0, size), the listener's write_lat answers at [size, 2 size), and
            // WINDOW slots for the bandwidth tests after that
            ByteBuffer bytes = ByteBuffer.allocateDirect((2 + depth) * size);
            MemoryRegion local = set.register(bytes, READ_WRITE);
            RdmaEndpoint endpoint = set.connect(server, TIMEOUT);
            WorkRequest answer = endpoint.receive();
            ByteBuffer hello = ByteBuffer.allocate(HELLO).put((byte) test).putInt(depth);
            local.remoteRegion().writeTo(hello);
            await(endpoint.send(hello.array()), "hello");
            await(answer, "the listener's region");
            RemoteRegion remote = RemoteRegion.fromBytes(answer.data());
            long[] samples = new long[iters];
            // read_lat: how long the post itself took (on rxe the whole READ may run in the post's system call)
            long[] posts = new long[iters];
            long start = 0;
            ChannelSetInfo before = set.info();
            switch (TESTS[test]) {
                case "read_lat" -> {
                    for (int i = -warmup; i < iters; i++) {
                        if (i == 0) {
                            start = startTiming();
                        }
                        long t0 = System.nanoTime();
                        WorkRequest read = endpoint.read(local, 0, size, remote, 0);
                        long posted = System.nanoTime();
                        await(read, "read", i);
                        if (i >= 0) {
                            samples[i] = System.nanoTime() - t0;
                            posts[i] = posted - t0;
                        }
                    }
                }
                case "write_lat" -> {
                    WorkRequest previous = null;
                    for (int i = -warmup; i < iters; i++) {
                        long sequence = i + warmup + 1L;
                        LONGS.setVolatile(bytes, size - 8, sequence);
                        if (i == 0) {
                            start = startTiming();
                        }
                        long t0 = System.nanoTime();
                        if (previous != null) { // its echo came back, so it is done or about to be
                            await(previous, "write", i - 1);
                        }
                        previous = endpoint.write(local, 0, size, remote, 0);
                        long deadline = t0 + TIMEOUT.toNanos();
                        while (sequenceAt(bytes, size, size) != sequence) {
                            if (System.nanoTime() > deadline) {
                                throw new IllegalStateException("no echo of write " + i + " within " + TIMEOUT);
                            }
                            Thread.onSpinWait();
                        }
                        if (i >= 0) {
                            samples[i] = (System.nanoTime() - t0) / 2; // half the round trip, as ib_write_lat
                        }
                    }
                }
                default -> start = stream(endpoint, local, remote, TESTS[test].equals("send_bw"), size, iters,
                    warmup, depth, signalEvery);
            }
            long elapsed = System.nanoTime() - start;
            long jit = JitTime.since(jitAtStart); // ms the compilers worked in the timed part
            printSchedule(iters);
            // the client's CQ events per operation, warm-up included: each one woke the event loop
            double events = (set.info().completionEvents() - before.completionEvents()) / (double) (iters + warmup);
            if (TESTS[test].endsWith("_bw")) {
                double rate = iters / (elapsed / 1e9);
                System.out.printf("result test=%s size=%d window=%d signalEvery=%d iters=%d msgs/s=%.1f MB/s=%.2f "
                    + "cqEvents/op=%.3f jit=%d%n", TESTS[test], size, depth, signalEvery, iters, rate,
                    rate * size / 1e6, events, jit);
            } else {
                Arrays.sort(samples);
                Arrays.sort(posts);
                double average = Arrays.stream(samples).average().orElse(0);
                System.out.printf("result test=%s size=%d iters=%d typical=%.2f average=%.2f cqEvents/op=%.3f jit=%d"
                    + "%s%n", TESTS[test], size, iters, samples[iters / 2] / 1e3, average / 1e3, events, jit,
                    posts[iters / 2] == 0 ? "" : String.format(" post=%.2f", posts[iters / 2] / 1e3));
            }
            endpoint.close();
        }
    }

    /**
     * WRITEs or sends with {@code window} outstanding, one in {@code signalEvery} signaled (and the last of the warm-up
     * and of the timed part, which the waits at their ends need); returns when the timed ones started.
     */
    private static long stream(RdmaEndpoint endpoint, MemoryRegion local, RemoteRegion remote, boolean send,
                               int size, int iters, int warmup, int window, int signalEvery)
        throws InterruptedException {
        ArrayDeque<WorkRequest> outstanding = new ArrayDeque<>();
        long start = System.nanoTime();
        for (int i = -warmup; i < iters; i++) {
            if (i == 0) {
                for (WorkRequest r : outstanding) { // the timed part starts with an empty window
                    await(r, "warm-up request");
                }
                outstanding.clear();
                start = startTiming();
            }
            if (outstanding.size() == window) {
                await(outstanding.poll(), "request", i);
            }
            int slot = 2 + Math.floorMod(i, window);
            boolean signaled = Math.floorMod(i + 1, signalEvery) == 0 || i == -1 || i == iters - 1;
            outstanding.add(send ? endpoint.send(local, slot * size, size, signaled)
                : endpoint.write(local, slot * size, size, remote, 0, signaled));
        }
        for (WorkRequest r : outstanding) {
            await(r, "the last requests");
        }
        return start;
    }

    /** The JIT's compile time when the timed part started ({@link JitTime}). */
    private static long jitAtStart = -1;
    // with -Dperftest.system=true: every other process's threads, kernel threads included (rxe's and softirq work)
    private static final boolean SYSTEM = Boolean.getBoolean("perftest.system");
    // the threads' schedule when the timed part started: this JVM's, and the system's when asked
    private static ThreadSchedule scheduleAtStart = ThreadSchedule.take();
    private static ThreadSchedule systemAtStart = SYSTEM ? ThreadSchedule.takeSystem() : null;

    /** Starts the timed part: notes the JIT's compile time and the threads' schedule, and returns the clock. */
    private static long startTiming() {
        systemAtStart = SYSTEM ? ThreadSchedule.takeSystem() : null; // first: reading all of /proc takes a while
        scheduleAtStart = ThreadSchedule.take();
        jitAtStart = JitTime.millis();
        return System.nanoTime();
    }

    /** Prints what each thread (and with -Dperftest.system, each other task) did per operation in the timed part. */
    private static void printSchedule(int iters) {
        ThreadSchedule.take().print("client", scheduleAtStart, iters);
        if (systemAtStart != null) {
            ThreadSchedule.takeSystem().print("system", systemAtStart, iters);
        }
    }

    private static void await(WorkRequest request, String what) throws InterruptedException {
        await(request, what, Long.MIN_VALUE);
    }

    /**
     * Awaits {@code request}, the operation {@code what} numbered {@code index} (none: {@code Long.MIN_VALUE}), and
     * fails naming both unless it succeeded. The name is made only then: C's loops format nothing per operation.
     */
    private static void await(WorkRequest request, String what, long index) throws InterruptedException {
        WorkCompletion done = request.await(TIMEOUT);
        if (done == null || !done.isSuccess()) {
            throw new IllegalStateException(what + (index == Long.MIN_VALUE ? "" : " " + index) + ": "
                + (done == null ? "not completed within " + TIMEOUT : done.statusText()));
        }
    }

    // ---- the listener ----

    private static void server(int port, int size) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        AtomicLong received = new AtomicLong();
        try (ConnectorRuntime runtime = ConnectorRuntime.standalone("perftest-server", 2)) {
            busyPolling(runtime);
            // receives enough for send_bw's window of 64 and more while the endpoint's deliveries run; the listener
            // awaits its own writes (write_lat) as perftest's server polls for them, so none is delivered to it
            Activation activation = runtime.hub().activate(ListenerSettings.builder().address("0.0.0.0").port(port)
                .maxConnections(1).maxConnectionsPerPeer(1).receiveBufferCount(256)
                .receiveBufferSize(Math.max(size, HELLO)).maxConcurrentDeliveries(8).deliverSendCompletions(false)
                .build(), new PlainSink("perftest", event -> {
                    if (event.type() == CmEventType.DISCONNECTED) {
                        done.countDown();
                    }
                }, completion -> {
                    if (completion.isReceive() && completion.isSuccess() && received.getAndIncrement() == 0) {
                        hello(completion.connection(), ByteBuffer.wrap(completion.data()), size, done);
                    }
                }));
            System.out.println("listening on port " + port);
            done.await();
            System.out.println("server: " + received.get() + " messages received");
            activation.close();
        }
    }

    /** Registers the listener's region, answers with it, and for write_lat starts the echoing thread. */
    private static void hello(InboundConnection connection, ByteBuffer hello, int size, CountDownLatch done) {
        String test = TESTS[hello.get()];
        int window = hello.getInt();
        RemoteRegion client = RemoteRegion.readFrom(hello);
        ByteBuffer bytes = ByteBuffer.allocateDirect((1 + window) * size);
        MemoryRegion region = connection.register(bytes, READ_WRITE);
        connection.send(region.remoteRegion().toBytes());
        if (test.equals("write_lat")) {
            Thread echo = new Thread(() -> echoWrites(connection, region, bytes, client, size, done), "write-lat-echo");
            echo.setDaemon(true);
            echo.start();
        }
    }

    /** write_lat's other side: each sequence number the client wrote goes back into its region's answer slot. */
    private static void echoWrites(InboundConnection connection, MemoryRegion region, ByteBuffer bytes,
                                   RemoteRegion client, int size, CountDownLatch done) {
        long expected = 1;
        WorkRequest previous = null;
        try {
            while (done.getCount() > 0) {
                if (sequenceAt(bytes, 0, size) != expected) {
                    Thread.onSpinWait();
                    continue;
                }
                if (previous != null) {
                    await(previous, "echo", expected - 1);
                }
                previous = connection.write(region, 0, size, client, size);
                expected++;
            }
        } catch (RuntimeException | InterruptedException e) {
            if (connection.isConnected()) {
                System.err.println("write_lat echo failed: " + e);
            }
        }
    }
}
