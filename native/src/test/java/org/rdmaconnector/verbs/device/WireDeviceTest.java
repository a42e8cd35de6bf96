package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.verbs.TestProbes;
import org.rdmaconnector.verbs.jna.Layout;

/**
 * Two hosts on one wire (guest b of {@code rdma-vm run2}; a {@link PeerAgent} runs in guest a): rdma-core's
 * rdma_client and rdma_server with each other (the environment), rdma_client and ucmatose against the connector's
 * listener, the connector's client against rdma_server and ucmatose,
 * 10,000 messages between the connector's own client and listener with their bytes and order intact on a clean, a
 * lossy (netem 5 % and 1 %) and a delayed, jittered wire, a partition longer than the retry budget (the verbs status
 * named, nothing hangs, and new connections work once the link heals), and a disconnect sent into a short outage
 * that still reaches a client that only waits.
 */
@Tag("wire")
@Order(0) // in the two-host boot, before SoakDeviceTest and PeerDeathDeviceTest (which ends the peer)
@Timeout(600)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WireDeviceTest {
    private static final int ECHO_PORT = 7471;
    /** The listener's liveness rule: a connection the partition cut off is reclaimed after this. */
    private static final int IDLE_SECONDS = 20;
    private static final int MESSAGES = Integer.getInteger("rdma.wire.messages", 10_000);
    /**
     * AckTimeout on both sides: 4.096 us x 2^14 = 67 ms before a packet is sent again. The RDMA CM's own choice on
     * RoCE (about half a second) made 5 % loss cost ~100 ms per message here.
     */
    private static final int ACK_TIMEOUT = 14;
    private static final ChannelSettings CHANNELS = ChannelSettings.DEFAULTS.withAckTimeout(ACK_TIMEOUT);
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final InetSocketAddress ECHO = new InetSocketAddress(Peer.ADDRESS, ECHO_PORT);
    /** The peer's listener for the short outage. */
    private static final int OUTAGE_PORT = 7477;
    /**
     * When the peer's listener sends its held echoes (from when it is told), and how long this guest's cable is out
     * (from when it went; the host takes it out within about a second). The echoes fail about 0.5 s after they are
     * sent, and the listener's DREQ goes out with the failure and again every 4.1 s: a resend reaches this guest once
     * the cable is back (with the wait of 3 s the connection was destroyed before the first resend).
     */
    private static final long RELEASE_MILLIS = 4000;
    private static final long OUTAGE_MILLIS = 8000;
    /** How long the client's stream waits for an echo: longer than the CM's DREQ retries, so only hearing ends it. */
    private static final Duration OUTAGE_STREAM_TIMEOUT = Duration.ofSeconds(120);

    private static Peer peer;
    private static ConnectorStack stack;

    @BeforeAll
    static void start() throws Exception {
        peer = Peer.connect(Duration.ofSeconds(180));
        peer.call("listen " + ECHO_PORT + " " + IDLE_SECONDS + " " + ACK_TIMEOUT);
        stack = new ConnectorStack();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            netem("del", "");
            if (stack != null) {
                stack.close();
            }
        } finally {
            if (peer != null) {
                peer.quit();
                peer.close();
            }
        }
    }

    @Test
    @Order(0)
    void rdmaCoresOwnServerAndClientTalkAcrossTheWire() throws Exception {
        peer.call("start rdma_server rdma_server -p 7470");
        String client = "";
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!client.startsWith("exit=0") && System.nanoTime() < deadline) { // until the server listens
            client = Shell.run(30, "rdma_client -s " + Peer.ADDRESS + " -p 7470");
        }
        assertTrue(client.startsWith("exit=0") && client.contains("rdma_client: end 0"), client);
        String server = peer.call("wait rdma_server 30");
        assertTrue(server.startsWith("exit=0") && server.contains("rdma_server: end 0"), server);
        String neighbour = Shell.run(10, "ip neigh show dev eth0");
        assertTrue(neighbour.contains(Peer.ADDRESS + " lladdr"), "the peer was reached on eth0: " + neighbour);
    }

    @Test
    @Order(1)
    void rdmaCoresClientsTalkToTheListener() throws Exception {
        String client = Shell.run(60, "rdma_client -s " + Peer.ADDRESS + " -p " + ECHO_PORT);
        assertTrue(client.startsWith("exit=0") && client.contains("rdma_client: end 0"), client);
        awaitPeer("rdma_client's connection is gone from the listener", ECHO_PORT, "connections", 0);
        Map<String, Long> stats = Peer.numbers(peer.call("stats " + ECHO_PORT));
        assertEquals(1, stats.get("receives"), "rdma_client's one message: " + stats);

        // ucmatose's client waits for the server's messages, then replies to each
        int greetPort = 7474;
        peer.call("listen " + greetPort + " " + IDLE_SECONDS + " 0 greet 10 100");
        String ucmatose = Shell.run(120, "ucmatose -s " + Peer.ADDRESS + " -p " + greetPort + " -C 10 -S 100");
        assertTrue(ucmatose.startsWith("exit=0") && ucmatose.contains("data transfers complete"), ucmatose);
        awaitPeer("ucmatose's connection is gone from the listener", greetPort, "connections", 0);
        stats = Peer.numbers(peer.call("stats " + greetPort));
        assertEquals(10, stats.get("receives"), "ucmatose's 10 replies: " + stats);
        assertEquals(0, stats.get("outOfSequence"), stats.toString());
        assertEquals(0, stats.get("failures"), "ucmatose disconnected; nothing failed: " + stats);
    }

    @Test
    @Order(2)
    void theClientGetsItsAnswerFromRdmaServer() throws Exception {
        peer.call("start rdma_server rdma_server -p 7472");
        try (ChannelSet set = ChannelSet.open(CHANNELS, stack.devices, stack.engine)) {
            RdmaEndpoint endpoint = PeerAgent.connect(set, new InetSocketAddress(Peer.ADDRESS, 7472), TIMEOUT);
            WorkRequest answer = endpoint.receive();
            assertSuccess("send", endpoint.send("sixteen bytes!!!".getBytes(StandardCharsets.US_ASCII)));
            assertSuccess("rdma_server's answer", answer);
            assertEquals(16, answer.data().length, "rdma_server answers with its 16-byte buffer");
            endpoint.close();
        }
        String server = peer.call("wait rdma_server 60");
        assertTrue(server.startsWith("exit=0") && server.contains("rdma_server: end 0"), server);
    }

    @Test
    @Order(3)
    void theClientExchangesMessagesWithUcmatose() throws Exception {
        int count = 10;
        peer.call("start ucmatose ucmatose -p 7473 -C " + count + " -S 100");
        try (ChannelSet set = ChannelSet.open(CHANNELS, stack.devices, stack.engine)) {
            RdmaEndpoint endpoint = PeerAgent.connect(set, new InetSocketAddress(Peer.ADDRESS, 7473), TIMEOUT);
            List<WorkRequest> received = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                received.add(endpoint.receive()); // ucmatose sends its messages as soon as it is connected
            }
            for (int i = 0; i < count; i++) {
                assertSuccess("send " + i, endpoint.send(new byte[100]));
            }
            for (WorkRequest r : received) {
                assertSuccess("ucmatose's message", r);
                assertEquals(100, r.data().length);
            }
            // ucmatose disconnects once its transfers are complete; the endpoint answers it
            TestProbes.await("ucmatose's disconnect", TIMEOUT, () -> !endpoint.isConnected());
            endpoint.close();
        }
        String server = peer.call("wait ucmatose 60");
        assertTrue(server.startsWith("exit=0") && server.contains("data transfers complete"), server);
    }

    @Test
    @Order(4)
    void tenThousandMessagesOnACleanWire() throws Exception {
        echo("clean wire", "");
    }

    @Test
    @Order(5)
    void tenThousandMessagesWithFivePercentLoss() throws Exception {
        echo("netem loss 5%", "loss 5%");
    }

    @Test
    @Order(6)
    void tenThousandMessagesWithOnePercentLoss() throws Exception {
        echo("netem loss 1%", "loss 1%");
    }

    @Test
    @Order(7)
    void tenThousandMessagesWithDelayAndJitter() throws Exception {
        // netem's jitter reorders packets that overtake each other unless a rate is set (then each leaves after the
        // one before, as on one link); reordered, rxe answers each gap with a go-back-N retransmission: 18 messages/s
        echo("netem delay 2ms 1ms rate 1gbit", "delay 2ms 1ms rate 1gbit");
    }

    @Test
    @Order(8)
    void aPartitionBeyondTheRetryBudgetFailsWithItsStatusAndHeals() throws Exception {
        try (ChannelSet set = ChannelSet.open(CHANNELS, stack.devices, stack.engine)) {
            RdmaEndpoint endpoint = PeerAgent.connect(set, ECHO, TIMEOUT);
            new EchoStream(endpoint, 8, 1024, TIMEOUT).run(100);
            awaitPeer("the connection is up at the listener", "connections", 1);
            // on this guest only: the control connection to the peer crosses the same wire
            String cut = Shell.run(30, "tc qdisc replace dev eth0 root netem loss 100%");
            assertTrue(cut.startsWith("exit=0"), cut);
            long start = System.nanoTime();
            try {
                WorkRequest send = endpoint.send(new byte[64]);
                WorkCompletion failed = send.await(Duration.ofSeconds(120));
                assertNotNull(failed, "a send into a partition completes (with an error) within 120 s");
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                System.out.println("WireDeviceTest: partition: the send failed after " + millis + " ms: "
                    + failed.statusText());
                assertEquals(Layout.IBV_WC_RETRY_EXC_ERR, failed.status(), failed.statusText());
                assertEquals("transport retry counter exceeded", failed.statusText());
                long closing = System.nanoTime();
                endpoint.close(); // its DREQ goes nowhere: the close is bounded
                System.out.println("WireDeviceTest: partition: close took "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closing) + " ms");
                assertFalse(endpoint.isConnected());
            } finally {
                Shell.run(30, "tc qdisc del dev eth0 root");
            }
            long healed = System.nanoTime();
            awaitPeer("the cut-off connection is gone from the listener", "connections", 0);
            System.out.println("WireDeviceTest: partition: the listener's side was gone "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - healed) + " ms after the link healed");
            RdmaEndpoint again = PeerAgent.connect(set, ECHO, TIMEOUT);
            new EchoStream(again, 9, 1024, TIMEOUT).run(100);
            again.close();
            assertEquals(0, set.endpointCount());
        }
        awaitPeer("no connection is left", "connections", 0);
        assertEquals(0, Peer.numbers(peer.call("stats " + ECHO_PORT)).get("outOfSequence"));
    }

    /**
     * A client cut off for a moment that only waits still hears of the disconnect. The peer's listener holds its
     * echoes back until this guest's stream has its whole window sent and acknowledged (from then on the client only
     * waits), and sends them a moment later, when this guest's cable is out: they use their retries up, the listener
     * takes this host for dead and disconnects, and its DREQ is lost in the outage. Once the cable is back, the CM's
     * resend of the DREQ must reach the client, whose stream then ends as broken (RELIABILITY.md, finding 6: a
     * connection destroyed before the resend left the client waiting for its echoes until its own timeout).
     */
    @Test
    @Order(9)
    void aClientThatOnlyWaitsHearsOfADisconnectSentIntoAShortOutage() throws Exception {
        peer.call("listen " + OUTAGE_PORT + " 600 " + ACK_TIMEOUT);
        try (ChannelSet set = ChannelSet.open(CHANNELS, stack.devices, stack.engine)) {
            RdmaEndpoint endpoint = PeerAgent.connect(set, new InetSocketAddress(Peer.ADDRESS, OUTAGE_PORT), TIMEOUT);
            EchoStream stream = new EchoStream(endpoint, 10, 1024, OUTAGE_STREAM_TIMEOUT);
            stream.run(100);
            peer.call("hold " + OUTAGE_PORT);
            FutureTask<Throwable> waiting = stream.runUntilItEnds("wire-outage-stream");
            awaitPeer("the stream's whole window sent and waiting for its echoes", OUTAGE_PORT, "held",
                EchoStream.WINDOW);
            peer.call("release " + OUTAGE_PORT + " " + RELEASE_MILLIS);
            long told = System.nanoTime();
            VmHost.cable(false);
            long out = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - told);
            System.out.println("WireDeviceTest: outage: the cable went out " + out + " ms after the echoes' release "
                + "was set " + RELEASE_MILLIS + " ms ahead");
            try {
                assertTrue(out < RELEASE_MILLIS, "the host took the cable out " + out + " ms after the release was "
                    + "set, so the echoes may have gone before the outage: the fault this test needs did not happen");
                Thread.sleep(OUTAGE_MILLIS); // the fault's shape: the echoes and the listener's DREQ go into it
            } finally {
                VmHost.cable(true);
            }
            long back = System.nanoTime();
            Map<String, Long> stats = Peer.numbers(peer.call("stats " + OUTAGE_PORT));
            assertTrue(stats.get("failedSends") > 0, "the echoes were released into the outage and failed: " + stats);
            Throwable ended = waiting.get(OUTAGE_STREAM_TIMEOUT.toSeconds() + 30, TimeUnit.SECONDS);
            System.out.println("WireDeviceTest: outage: the client's stream ended "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - back) + " ms after the cable was back: " + ended);
            assertInstanceOf(EchoStream.Broken.class, ended, "the client heard of the disconnect: its stream ended "
                + "broken, not at its own timeout");
            endpoint.close();
        }
        awaitPeer("the connection is gone from the listener", OUTAGE_PORT, "connections", 0);
        assertEquals(0, Peer.numbers(peer.call("stats " + OUTAGE_PORT)).get("outOfSequence"));
    }

    /** MESSAGES echoed by the peer's listener with {@code netem} on both ends of the wire ("" for none). */
    private static void echo(String what, String netem) throws Exception {
        long receivesBefore = Peer.numbers(peer.call("stats " + ECHO_PORT)).get("receives");
        if (!netem.isEmpty()) {
            netem("replace", netem);
        }
        EchoStream.Figures figures;
        try (ChannelSet set = ChannelSet.open(CHANNELS, stack.devices, stack.engine)) {
            RdmaEndpoint endpoint = PeerAgent.connect(set, ECHO, TIMEOUT);
            EchoStream stream = new EchoStream(endpoint, what.hashCode(), 4096, TIMEOUT);
            do { // in steps, to show the rate while it runs
                figures = stream.run(Math.min(MESSAGES, stream.echoed() + MESSAGES / 10));
                System.out.println("WireDeviceTest: " + what + ": " + figures);
            } while (figures.messages() < MESSAGES);
            endpoint.close();
        } finally {
            if (!netem.isEmpty()) {
                netem("del", "");
            }
        }
        assertEquals(MESSAGES, figures.messages());
        awaitPeer("the connection is gone from the listener", "connections", 0);
        Map<String, Long> stats = Peer.numbers(peer.call("stats " + ECHO_PORT));
        assertEquals(receivesBefore + MESSAGES, stats.get("receives"), "each message delivered once: " + stats);
        assertEquals(0, stats.get("outOfSequence"), stats.toString());
        assertEquals(0, stats.get("undeliverable"), stats.toString());
    }

    /** {@code tc qdisc ACTION dev eth0 root netem ARGS} on both guests ({@code del} tolerates no qdisc). */
    private static void netem(String action, String args) throws IOException, InterruptedException {
        String command = "tc qdisc " + action + " dev eth0 root" + (action.equals("del") ? "" : " netem " + args);
        String local = Shell.run(30, command);
        String remote = peer == null ? "exit=0" : peer.call("sh 30 " + command);
        if (!action.equals("del")) {
            assertTrue(local.startsWith("exit=0") && remote.startsWith("exit=0"), local + " / " + remote);
        }
    }

    private static void awaitPeer(String what, String key, long value) throws InterruptedException {
        awaitPeer(what, ECHO_PORT, key, value);
    }

    private static void awaitPeer(String what, int port, String key, long value) throws InterruptedException {
        TestProbes.await(what, Duration.ofSeconds(3L * IDLE_SECONDS + 60), () -> {
            try {
                return Peer.numbers(peer.call("stats " + port)).get(key) == value;
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private static void assertSuccess(String what, WorkRequest request) throws InterruptedException {
        WorkCompletion wc = request.await(TIMEOUT);
        assertNotNull(wc, what + " completed");
        assertTrue(wc.isSuccess(), what + ": " + wc.statusText());
    }
}
