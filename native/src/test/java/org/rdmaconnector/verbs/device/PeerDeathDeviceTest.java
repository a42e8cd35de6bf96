package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.connector.spi.Pool;
import org.rdmaconnector.connector.spi.PooledConnections;
import org.rdmaconnector.verbs.TestProbes;
import org.rdmaconnector.verbs.jna.Layout;

/**
 * A peer host killed mid-stream (in one guest of {@code rdma-vm run2}, after the soak in the same JVM; the host kills
 * the other guest's qemu when this test asks, so the peer says nothing more on the wire). Before: the peer streams
 * messages to this guest's listener and holds a second, trickling connection to it, and this guest's pooled client
 * streams to the peer's listener. After:
 * <ul>
 *   <li>the client's next send fails with its cause named (transport retry counter exceeded), and its requests in
 *       flight complete (flushed), never not at all;</li>
 *   <li>the listener reclaims both of the peer's connections (a failing send, and the liveness rule for the one that
 *       only waits), without waiting out its drain deadline for an answer the peer cannot give, and its endpoint
 *       sees each end as a failed DISCONNECTED;</li>
 *   <li>the pooled handle closes without hanging, and the next borrow connects and echoes;</li>
 *   <li>fds, threads, direct memory and the kernel's RDMA objects are back to where they were, librdmacm's own
 *       protection domain included (RELIABILITY.md, "librdmacm's protection domain").</li>
 * </ul>
 */
@Tag("peer-death")
@Order(2) // after SoakDeviceTest: it ends the peer
@Timeout(600)
class PeerDeathDeviceTest {
    private static final int PORT = 7471;
    /** The listener's liveness rule for the peer's trickling connection. */
    private static final int IDLE_SECONDS = 6;
    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    /** The listener's drain deadline (AcceptedConnection.DRAIN_DEADLINE), which bounds a disconnect nobody answers. */
    private static final Duration DRAIN_DEADLINE = Duration.ofSeconds(60);

    @Test
    void aPeerKilledMidStreamIsReclaimedAndNothingIsLeft() throws Exception {
        try (Peer peer = Peer.connect(Duration.ofSeconds(180))) {
            peer.call("listen " + PORT + " 600 0");
            Baseline before = Baseline.afterWarmUp();
            try (ConnectorStack stack = new ConnectorStack();
                 PooledConnections pool = new PooledConnections(ChannelSettings.DEFAULTS,
                     new Pool.Settings(0, 1, Duration.ofMinutes(1), Duration.ofSeconds(5)), stack.devices,
                     stack.engine, (task, delay) -> () -> { })) {
                CountingEcho echo = new CountingEcho();
                Activation listener = stack.hub.activate(ListenerSettings.builder().address(Peer.SELF).port(PORT)
                    .idleTimeoutSeconds(IDLE_SECONDS).build(), echo);
                echo.activation(listener);
                await("listening", () -> listener.state() == Activation.State.LISTENING);
                peer.call("stream " + Peer.SELF + " " + PORT);
                peer.call("trickle " + Peer.SELF + " " + PORT);

                RdmaConnection handle = pool.getConnection();
                RdmaEndpoint out = handle.connect(new InetSocketAddress(Peer.ADDRESS, PORT), Duration.ofSeconds(20));
                EchoStream stream = new EchoStream(out, 1, 1024, TIMEOUT);
                FutureTask<Throwable> outbound = stream.runUntilItEnds("peer-death-outbound");
                await("mid-stream both ways", () -> listener.connectionCount() == 2 && echo.receives.get() > 300
                    && stream.echoed() > 300);

                long killed = System.nanoTime();
                VmHost.killPeer();
                System.out.println("PeerDeathDeviceTest: the peer's guest killed after " + echo.receives + " messages in, "
                    + stream.echoed() + " out");

                // RC has no keepalive: with its sends acknowledged, the client only waits for echoes, and learns of
                // the death when it sends again (or by its own timeout)
                WorkCompletion probe = out.send(new byte[16]).await(TIMEOUT);
                assertNotNull(probe, "a send to the dead peer completes (with an error) within " + TIMEOUT);
                Throwable ended = outbound.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                EchoStream.Broken broken = assertInstanceOf(EchoStream.Broken.class, ended,
                    "the stream's requests in flight completed with an error");
                // the first of the endpoint's requests to fail names the cause; the others are flushed after it
                WorkCompletion cause = probe.status() == Layout.IBV_WC_WR_FLUSH_ERR ? broken.cause : probe;
                System.out.println("PeerDeathDeviceTest: " + millisSince(killed) + " ms after the kill the next send "
                    + "had completed with " + probe.statusText() + " and the stream had ended: " + broken.getMessage());
                assertEquals(Layout.IBV_WC_RETRY_EXC_ERR, cause.status(), cause.statusText());
                assertEquals("transport retry counter exceeded", cause.statusText());

                await("both of the peer's connections reclaimed", () -> listener.connectionCount() == 0);
                long reclaimed = millisSince(killed);
                System.out.println("PeerDeathDeviceTest: the listener reclaimed the peer's connections "
                    + reclaimed + " ms after the kill; " + echo.stats());
                assertTrue(reclaimed < DRAIN_DEADLINE.toMillis(), "reclaimed " + reclaimed + " ms after the kill: a "
                    + "connection whose peer is taken for dead waits only briefly for an answer, not for the drain "
                    + "deadline");
                assertEquals(2, echo.failures.get(), "each connection's end reached the endpoint as a failure: "
                    + echo.stats());
                assertEquals(0, echo.outOfSequence.get(), echo.stats());

                long closing = System.nanoTime();
                handle.close();
                System.out.println("PeerDeathDeviceTest: the handle closed in " + millisSince(closing) + " ms");
                try (RdmaConnection next = pool.getConnection()) {
                    RdmaEndpoint again = next.connect(new InetSocketAddress(Peer.SELF, PORT), Duration.ofSeconds(20));
                    assertEquals(100, new EchoStream(again, 2, 1024, TIMEOUT).run(100).messages());
                }
                System.out.println("PeerDeathDeviceTest: pool " + pool.counters());
                assertEquals(0, pool.counters().borrowed(), pool.counters().toString());
                listener.close();
            }
            Baseline after = Baseline.awaitBack(before);
            System.out.println("PeerDeathDeviceTest: before " + before + ", after " + after);
            assertTrue(after.isBackTo(before), "before " + before + ", after " + after);
        }
    }

    private static long millisSince(long start) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    private static void await(String what, java.util.function.BooleanSupplier condition)
        throws InterruptedException {
        TestProbes.await(what, TIMEOUT, condition);
    }
}
