package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.verbs.TestProbes;

/**
 * Connection churn on rxe0: a client connects, sends one message, gets its echo and disconnects, again and again,
 * under the guest JVM's 32 MiB direct-memory cap (see GuestRun). None is refused, and afterwards the process's fds,
 * threads, direct memory and the kernel's RDMA resources (rdma res: qp, cq, mr, cm_id) are back to their baseline:
 * a destroyed connection frees its memory at once, not at the next GC or a minute later.
 */
@Tag("device")
@Timeout(900)
class ChurnDeviceTest {
    private static final int CYCLES = Integer.getInteger("rdma.test.churn.cycles", 2000);

    @Test
    void connectEchoCloseCyclesRefuseNoneAndLeaveNothingBehind() throws Exception {
        try (ConnectorStack stack = new ConnectorStack()) {
            int port = Loopback.nextPort();
            Activation echo = stack.hub.activate(ListenerSettings.of(Loopback.ADDRESS, port, null, "accept", null, 4,
                256, 2), Recorder.echo());
            TestProbes.await("listening", Loopback.TIMEOUT, () -> echo.state() == Activation.State.LISTENING);
            ChannelSettings client = new ChannelSettings("rxe0", 1, 64, 0, 4, 4, 0, 1 << 20);
            try (ChannelSet set = ChannelSet.open(client, stack.devices, stack.engine)) {
                InetSocketAddress listener = new InetSocketAddress(Loopback.ADDRESS, port);
                IllegalArgumentException huge = assertThrows(IllegalArgumentException.class,
                    () -> set.connect(listener, Duration.ofMillis(Long.MAX_VALUE)));
                assertTrue(huge.getMessage().startsWith("timeout must be positive and at most 2147483647 ms"),
                    huge.getMessage());
                cycle(set, listener, 0); // warm-up: the listener's queue set on rxe0 and librdmacm's state exist now
                TestProbes.await("the warm-up connection is gone", Loopback.TIMEOUT, () -> echo.connectionCount() == 0);
                Baseline before = Baseline.take();

                List<String> refused = new ArrayList<>();
                long started = System.nanoTime();
                for (int i = 1; i <= CYCLES; i++) {
                    try {
                        cycle(set, listener, i);
                    } catch (RuntimeException | OutOfMemoryError e) {
                        refused.add("cycle " + i + ": " + e);
                    }
                }
                double seconds = (System.nanoTime() - started) / 1e9;
                TestProbes.await("every accepted connection destroyed", Loopback.TIMEOUT,
                    () -> echo.connectionCount() == 0);
                long settled = System.nanoTime();
                Baseline after = Baseline.awaitBack(before);
                System.out.printf("ChurnDeviceTest: %d cycles in %.1f s (%.1f cycles/s), %d refused; back to "
                    + "baseline %d ms after the last disconnect%n  before %s%n  after  %s%n", CYCLES, seconds,
                    CYCLES / seconds, refused.size(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - settled),
                    before, after);
                assertEquals(List.of(), refused.subList(0, Math.min(5, refused.size())), refused.size() + " refused");
                assertTrue(after.isBackTo(before), "fds, threads, direct memory and rdma res after " + CYCLES
                    + " cycles: before " + before + ", after " + after);
            }
            echo.close();
        }
    }

    private static void cycle(ChannelSet set, InetSocketAddress listener, int i) throws InterruptedException {
        RdmaEndpoint endpoint = set.connect(listener, Loopback.TIMEOUT);
        try {
            WorkRequest reply = endpoint.receive();
            byte[] message = ("churn " + i).getBytes(StandardCharsets.UTF_8);
            WorkCompletion sent = endpoint.send(message).await(Loopback.TIMEOUT);
            assertNotNull(sent, "send of cycle " + i);
            assertNotNull(reply.await(Loopback.TIMEOUT), "echo of cycle " + i);
            assertArrayEquals(message, reply.data(), "echo of cycle " + i);
        } finally {
            endpoint.close();
        }
    }
}
