package org.rdmaconnector.bench;

import java.net.InetSocketAddress;
import java.time.Duration;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.verbs.CmEvent;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.ConnectionParameters;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.PortSpace;
import org.rdmaconnector.verbs.ProtectionDomain;
import org.rdmaconnector.verbs.QueuePairCapabilities;

/**
 * The RDMA CM connect/disconnect loop through rdma-native, step for step what {@code bench/src/main/c/
 * cm_connect_loop.c} does in C (see there), after {@code WARMUP} untimed connections for the JIT. The warm-up runs
 * in two parts, each followed by a wait until the JIT is idle ({@link JitTime#warmUp}, {@code -Dcmloop.quietMillis},
 * default 1000), so that the compilers' queue is not drained in the timed part. With {@code
 * -Dcmloop.busyPollMicros=N} each wait for an event polls the non-blocking channel for N us before it sleeps. With a
 * role, one side only, for two hosts, as the C loop's: {@code server} listens on ADDRESS and accepts WARMUP +
 * CONNECTIONS connections, {@code client} makes them to ADDRESS and times them (its warm-up's waits for the JIT leave
 * the server waiting for the next connection meanwhile).
 * Usage: {@code CmConnectLoop [client|server] ADDRESS PORT CONNECTIONS WARMUP}.
 */
public final class CmConnectLoop {
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    // the server role's wait for the next connection: the client's warm-up pauses for its JIT meanwhile
    private static final Duration NEXT_CLIENT = Duration.ofMillis(2 * JitTime.MAX_WAIT_MILLIS);
    private static final QueuePairCapabilities CAPS = QueuePairCapabilities.of(4, 4);
    private static final long QUIET_MILLIS = Long.getLong("cmloop.quietMillis", 1000);
    // -Dcmloop.busyPollMicros: 0 (default) blocks in rdma_get_cm_event as the C loop does
    private static final long BUSY_POLL_NANOS = Long.getLong("cmloop.busyPollMicros", 0) * 1000;
    // waits whose busy poll found nothing, so that the thread slept in poll(2) on the channel's fd
    private static long sleeps;

    private CmConnectLoop() {
    }

    private static CmEvent expect(EventChannel channel, CmEventType type) {
        return expect(channel, type, TIMEOUT);
    }

    private static CmEvent expect(EventChannel channel, CmEventType type, Duration timeout) {
        CmEvent event = BUSY_POLL_NANOS > 0 ? next(channel, timeout) : channel.getEvent();
        if (event.type() != type) {
            throw new IllegalStateException("expected " + type + ", got " + event + " status " + event.status());
        }
        return event;
    }

    /**
     * The next event of a non-blocking {@code channel}, polled for {@link #BUSY_POLL_NANOS} before the thread sleeps
     * in poll(2) on its fd: the engine's hybrid strategy for CQs applied to the CM channel, one rdma_get_cm_event
     * (a read system call) per poll.
     */
    private static CmEvent next(EventChannel channel, Duration timeout) {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        while (true) {
            CmEvent event = channel.getEvent();
            if (event != null) {
                return event;
            }
            long now = System.nanoTime();
            if (now - start >= BUSY_POLL_NANOS) {
                if (now - deadline >= 0) {
                    throw new IllegalStateException("no CM event on " + channel + " within " + timeout);
                }
                sleeps++;
                channel.awaitEvent(Duration.ofNanos(deadline - now));
            } else {
                Thread.onSpinWait();
            }
        }
    }

    public static void main(String[] args) throws InterruptedException {
        String role = args.length == 5 ? args[0] : "both";
        if (args.length != 4 && !(args.length == 5 && (role.equals("client") || role.equals("server")))) {
            System.err.println("usage: CmConnectLoop [client|server] ADDRESS PORT CONNECTIONS WARMUP");
            System.exit(2);
        }
        int a = args.length - 4;
        InetSocketAddress address = new InetSocketAddress(args[a], Integer.parseInt(args[a + 1]));
        int connections = Integer.parseInt(args[a + 2]);
        int warmup = Integer.parseInt(args[a + 3]);
        try (EventChannel serverChannel = role.equals("client") ? null : EventChannel.create();
             EventChannel clientChannel = role.equals("server") ? null : EventChannel.create()) {
            if (serverChannel != null) {
                CmId listener = serverChannel.createId(PortSpace.TCP);
                listener.bind(address);
                listener.listen(16);
            }
            for (EventChannel channel : new EventChannel[] {serverChannel, clientChannel}) {
                if (channel != null && BUSY_POLL_NANOS > 0) {
                    channel.setNonBlocking(true);
                }
            }
            Loop loop = new Loop(address, serverChannel, clientChannel);
            try {
                if (clientChannel == null) {
                    loop.connect(warmup + connections);
                    System.out.printf("Java cm server: %d connections%n", warmup + connections);
                    return;
                }
                long[] waited = {0};
                JitTime.warmUp(warmup, loop::connect, () -> waited[0] += JitTime.awaitQuiet(QUIET_MILLIS));
                long start = System.nanoTime();
                long jit = JitTime.millis();
                loop.connect(warmup + connections);
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf("Java cm loop: %d connections in %.3f s = %.1f connections/s%n", connections,
                    seconds, connections / seconds);
                System.out.printf("JIT compilation in the timed part: %d ms%n", JitTime.since(jit));
                if (BUSY_POLL_NANOS > 0) {
                    System.out.printf("busy poll %d us: %d sleeps in all%n", BUSY_POLL_NANOS / 1000, sleeps);
                }
                if (warmup > 0) {
                    System.out.printf("waited %d ms in all, during and after the warm-up, for the JIT to go quiet%n",
                        waited[0]);
                }
            } finally {
                loop.close();
            }
        }
    }

    /** The loop's state between its parts: the connections made so far and the verbs objects made on the first. */
    private static final class Loop {
        private final InetSocketAddress address;
        private final EventChannel serverChannel;
        private final EventChannel clientChannel;
        private final ConnectionParameters param = ConnectionParameters.defaults();
        private int done;
        private DeviceContext context;
        private ProtectionDomain pd;
        private CompletionQueue clientCq;
        private CompletionQueue serverCq;

        Loop(InetSocketAddress address, EventChannel serverChannel, EventChannel clientChannel) {
            this.address = address;
            this.serverChannel = serverChannel;
            this.clientChannel = clientChannel;
        }

        /**
         * Connects and disconnects until {@code until} connections are done, as cm_connect_loop.c does: each side
         * whose channel this loop has (both, or one for two hosts) takes its steps in the one-process loop's order.
         */
        void connect(int until) {
            for (; done < until; done++) {
                CmId client = null;
                CmId server = null;
                if (clientChannel != null) {
                    client = clientChannel.createId(PortSpace.TCP);
                    client.resolveAddress(null, address, TIMEOUT);
                    expect(clientChannel, CmEventType.ADDR_RESOLVED);
                    client.resolveRoute(TIMEOUT);
                    expect(clientChannel, CmEventType.ROUTE_RESOLVED);
                    makePdAndCqs(client);
                    client.createQueuePair(pd, clientCq, clientCq, CAPS);
                    client.connect(param);
                }
                if (serverChannel != null) {
                    server = expect(serverChannel, CmEventType.CONNECT_REQUEST, NEXT_CLIENT).id();
                    makePdAndCqs(server);
                    server.createQueuePair(pd, serverCq, serverCq, CAPS);
                    server.accept(param);
                }
                if (client != null) {
                    expect(clientChannel, CmEventType.ESTABLISHED);
                }
                if (server != null) {
                    expect(serverChannel, CmEventType.ESTABLISHED);
                }
                if (client != null) {
                    client.disconnect();
                }
                if (server != null) {
                    expect(serverChannel, CmEventType.DISCONNECTED);
                    server.disconnect();
                }
                if (client != null) {
                    expect(clientChannel, CmEventType.DISCONNECTED);
                }
                if (server != null) {
                    server.close(); // destroys its QP, then the id
                }
                if (client != null) {
                    client.close();
                }
            }
        }

        /** The PD and both CQs, made once, on the device of the first connection's id. */
        private void makePdAndCqs(CmId id) {
            if (pd == null) {
                context = id.openDeviceContext();
                pd = context.allocateProtectionDomain();
                clientCq = context.createCompletionQueue(16, null, 0);
                serverCq = context.createCompletionQueue(16, null, 0);
            }
        }

        void close() {
            if (context != null) {
                context.close();
            }
        }
    }
}
