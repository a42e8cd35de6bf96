package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.verbs.TestProbes;

/**
 * A flood of concurrent connect requests against MaxConnections and MaxConnectionsPerPeer on rxe0: peer A (10.0.0.1)
 * asks for far more connections than its share while peer B (10.0.0.3, a second address of dummy0) asks for its own.
 * The listener never holds more than its limits, A's excess requests are REJECTED with private data that says why,
 * and B is served (connected and echoed) while A floods.
 */
@Tag("device")
@Timeout(180)
class InboundFloodDeviceTest {
    private static final String PEER_A = Loopback.ADDRESS;
    private static final String PEER_B = "10.0.0.3";
    private static final int MAX_CONNECTIONS = 6;
    private static final int MAX_PER_PEER = 4;
    private static final int FLOOD = 12;
    private static final int B_CONNECTS = MAX_CONNECTIONS - MAX_PER_PEER;
    private static final String TOO_MANY_FROM_PEER = "rejected: too many connections from this peer";
    private static final String FULL = "rejected: listener full";

    @Test
    void aFloodFromOnePeerIsHeldToItsLimitsWhileAnotherPeerIsServed() throws Exception {
        Ip.run("addr", "add", PEER_B + "/24", "dev", "dummy0");
        List<RawClient> open = new ArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(FLOOD + B_CONNECTS);
        try (ConnectorStack stack = new ConnectorStack()) {
            TestProbes.await("rxe0 has a GID for " + PEER_B, Loopback.TIMEOUT, () -> hasGid(PEER_B));
            int port = Loopback.nextPort();
            Activation listener = stack.hub.activate(ListenerSettings.builder().address(Loopback.ADDRESS).port(port)
                .acceptPolicy("accept").receiveBufferCount(2).receiveBufferSize(256).maxConcurrentDeliveries(2)
                .maxConnections(MAX_CONNECTIONS).maxConnectionsPerPeer(MAX_PER_PEER).build(), Recorder.echo());
            TestProbes.await("listening", Loopback.TIMEOUT, () -> listener.state() == Activation.State.LISTENING);
            InetSocketAddress address = new InetSocketAddress(Loopback.ADDRESS, port);

            // every client resolves and sets up first, so that the connect requests themselves come at once
            List<RawClient> floodA = new ArrayList<>();
            for (int i = 0; i < FLOOD; i++) {
                floodA.add(track(open, RawClient.resolve(PEER_A, address)));
            }
            List<RawClient> peerB = new ArrayList<>();
            for (int i = 0; i < B_CONNECTS; i++) {
                peerB.add(track(open, RawClient.resolve(PEER_B, address)));
            }
            AtomicInteger maxHeld = new AtomicInteger();
            AtomicInteger samples = new AtomicInteger();
            AtomicBoolean flooding = new AtomicBoolean(true);
            Thread sampler = new Thread(() -> {
                while (flooding.get()) {
                    maxHeld.accumulateAndGet(listener.connectionCount(), Math::max);
                    samples.incrementAndGet();
                    try {
                        Thread.sleep(1); // a sample, not a wait: the guest's two cores are busy with the flood
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "connection-count-sampler");
            sampler.start();
            CountDownLatch go = new CountDownLatch(1);
            List<Future<String>> outcomesA = new ArrayList<>();
            List<Future<Long>> servedB = new ArrayList<>();
            long started = System.nanoTime();
            for (RawClient client : floodA) {
                outcomesA.add(threads.submit(() -> {
                    go.await();
                    client.connect();
                    return client.isEstablished() ? "accepted" : client.rejection();
                }));
            }
            for (RawClient client : peerB) {
                servedB.add(threads.submit(() -> {
                    go.await();
                    long t0 = System.nanoTime();
                    client.connect();
                    assertTrue(client.isEstablished(), () -> "peer B was rejected during A's flood: "
                        + client.rejection());
                    byte[] message = "from peer B".getBytes(StandardCharsets.US_ASCII);
                    assertArrayEquals(message, client.echo(message), "peer B's echo");
                    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                }));
            }
            go.countDown();
            Map<String, Integer> byOutcome = new TreeMap<>();
            for (Future<String> outcome : outcomesA) {
                byOutcome.merge(outcome.get(60, TimeUnit.SECONDS), 1, Integer::sum);
            }
            List<Long> bMillis = new ArrayList<>();
            for (Future<Long> served : servedB) {
                bMillis.add(served.get(60, TimeUnit.SECONDS));
            }
            long floodMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            flooding.set(false);
            sampler.join();

            assertEquals(MAX_PER_PEER, byOutcome.getOrDefault("accepted", 0), "A's accepted requests: " + byOutcome);
            int rejectedA = FLOOD - MAX_PER_PEER;
            assertEquals(rejectedA, byOutcome.getOrDefault(TOO_MANY_FROM_PEER, 0) + byOutcome.getOrDefault(FULL, 0),
                "A's rejections, each saying why: " + byOutcome);
            assertTrue(maxHeld.get() <= MAX_CONNECTIONS, "held " + maxHeld + " connections at most");
            assertEquals(MAX_CONNECTIONS, listener.connectionCount(), "A's share and B's");
            for (RawClient client : floodA) {
                if (client.isEstablished()) {
                    byte[] message = "from peer A".getBytes(StandardCharsets.US_ASCII);
                    assertArrayEquals(message, client.echo(message), "an accepted connection of A echoes");
                }
            }

            // full: the next request from either peer is refused as such
            String fullB = refused(open, PEER_B, address);
            assertEquals(FULL, fullB);
            // B's connections gone: A is still at its own limit, B is served again
            for (RawClient client : peerB) {
                client.close();
                open.remove(client);
            }
            TestProbes.await("B's connections are gone", Loopback.TIMEOUT,
                () -> listener.connectionCount() == MAX_PER_PEER);
            String perPeerA = refused(open, PEER_A, address);
            assertEquals(TOO_MANY_FROM_PEER, perPeerA);
            RawClient againB = track(open, RawClient.resolve(PEER_B, address));
            againB.connect();
            assertTrue(againB.isEstablished(), () -> "B after A's flood: " + againB.rejection());
            assertArrayEquals(new byte[] {42}, againB.echo(new byte[] {42}));
            // the counters JMX shows: every rejection above, by its reason
            Map<String, Long> counted = listener.rejections();
            assertEquals(byOutcome.getOrDefault(FULL, 0) + 1L, counted.get("MAX_CONNECTIONS"), "counted: " + counted);
            assertEquals(byOutcome.getOrDefault(TOO_MANY_FROM_PEER, 0) + 1L, counted.get("MAX_CONNECTIONS_PER_PEER"),
                "counted: " + counted);
            assertEquals(0L, counted.get("PEER_NOT_ALLOWED"));

            System.out.printf("InboundFloodDeviceTest: MaxConnections %d, MaxConnectionsPerPeer %d; peer A %d "
                    + "concurrent connects -> %s; peer B %d/%d connected and echoed during the flood in %s ms; flood "
                    + "settled in %d ms; most connections held %d (%d samples); then B refused with '%s', A refused "
                    + "with '%s', B served again%n", MAX_CONNECTIONS, MAX_PER_PEER, FLOOD, byOutcome, bMillis.size(),
                B_CONNECTS, bMillis, floodMillis, maxHeld.get(), samples.get(), fullB, perPeerA);
            for (RawClient client : List.copyOf(open)) {
                client.close();
                open.remove(client);
            }
            TestProbes.await("every connection is gone", Loopback.TIMEOUT, () -> listener.connectionCount() == 0);
            listener.close();
        } finally {
            threads.shutdownNow();
            for (RawClient client : open) {
                try {
                    client.close();
                } catch (RuntimeException | AssertionError e) {
                    // the test failed already; free what is left
                }
            }
            Ip.run("addr", "del", PEER_B + "/24", "dev", "dummy0");
        }
    }

    /** One more request from {@code source}, which must be REJECTED; returns why. */
    private static String refused(List<RawClient> open, String source, InetSocketAddress address) {
        RawClient client = track(open, RawClient.resolve(source, address));
        client.connect();
        assertTrue(!client.isEstablished(), "a request from " + source + " past the limits was accepted");
        return client.rejection();
    }

    private static RawClient track(List<RawClient> open, RawClient client) {
        open.add(client);
        return client;
    }

    /** Whether a GID of rxe0's port 1 is the IPv4-mapped form of {@code address} (RoCE v2 adds it with the address). */
    private static boolean hasGid(String address) {
        String[] octets = address.split("\\.");
        String suffix = String.format("ffff:%02x%02x:%02x%02x", Integer.parseInt(octets[0]),
            Integer.parseInt(octets[1]), Integer.parseInt(octets[2]), Integer.parseInt(octets[3]));
        try (Stream<Path> gids = Files.list(Path.of("/sys/class/infiniband/rxe0/ports/1/gids"))) {
            return gids.anyMatch(gid -> {
                try {
                    return Files.readString(gid).trim().endsWith(suffix);
                } catch (IOException e) {
                    return false;
                }
            });
        } catch (IOException e) {
            return false;
        }
    }
}
