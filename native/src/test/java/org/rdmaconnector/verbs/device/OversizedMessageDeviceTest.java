package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.verbs.TestProbes;

/**
 * A message larger than the listener's receive buffer (ReceiveBufferSize 256, sent from a ChannelSet endpoint whose
 * send slots take 4096 bytes) on rxe0: the listener's endpoint sees the failed receive, the connection goes away on
 * both sides (the sender's send fails and its endpoint is disconnected), nothing is echoed, and the next client,
 * with a message of exactly the buffer's size, is served as usual.
 */
@Tag("device")
@Timeout(120)
class OversizedMessageDeviceTest {
    private static final int BUFFER = 256;

    @Test
    void aMessageLargerThanTheReceiveBufferEndsOnlyItsConnection() throws Exception {
        try (ConnectorStack stack = new ConnectorStack()) {
            Recorder recorder = Recorder.echo();
            int port = Loopback.nextPort();
            Activation listener = stack.hub.activate(ListenerSettings.builder().address(Loopback.ADDRESS).port(port)
                .acceptPolicy("accept").receiveBufferCount(4).receiveBufferSize(BUFFER).build(), recorder);
            TestProbes.await("listening", Loopback.TIMEOUT, () -> listener.state() == Activation.State.LISTENING);
            InetSocketAddress address = new InetSocketAddress(Loopback.ADDRESS, port);
            ChannelSettings settings = new ChannelSettings("rxe0", 1, 64, 0, 4, 4, 0, 1 << 20);
            try (ChannelSet set = ChannelSet.open(settings, stack.devices, stack.engine)) {
                RdmaEndpoint oversized = set.connect(address, Loopback.TIMEOUT);
                WorkRequest noEcho = oversized.receive();
                byte[] tooLarge = pattern(4 * BUFFER);
                long sentAt = System.nanoTime();
                WorkCompletion sent = oversized.send(tooLarge).await(Loopback.TIMEOUT);
                assertNotNull(sent, "the oversized send completed");
                assertFalse(sent.isSuccess(), "the peer cannot take it: " + sent);
                TestProbes.await("the listener's endpoint saw the failed receive", Loopback.TIMEOUT,
                    () -> recorder.receives().stream().anyMatch(c -> !c.isSuccess()));
                TestProbes.await("the connection is gone from the listener", Loopback.TIMEOUT,
                    () -> listener.connectionCount() == 0);
                long goneMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentAt);
                TestProbes.await("the sender's endpoint is disconnected", Loopback.TIMEOUT,
                    () -> !oversized.isConnected());
                List<MessageCompletion> failed = recorder.receives();
                assertEquals(1, failed.size(), "one receive delivered (the failed one; the flushed are not): "
                    + failed);
                assertEquals(0, recorder.sends().size(), "nothing was echoed");
                oversized.close();
                assertTrue(noEcho.isDone() && !noEcho.result().isSuccess(), "the sender's receive is flushed: "
                    + noEcho);

                long nextAt = System.nanoTime();
                try (RdmaEndpoint next = set.connect(address, Loopback.TIMEOUT)) {
                    WorkRequest echo = next.receive();
                    byte[] fits = pattern(BUFFER);
                    WorkCompletion nextSent = next.send(fits).await(Loopback.TIMEOUT);
                    assertNotNull(nextSent, "the next client's send completed");
                    assertTrue(nextSent.isSuccess(), nextSent.toString());
                    assertNotNull(echo.await(Loopback.TIMEOUT), "the next client's echo arrived");
                    assertArrayEquals(fits, echo.data(), "a message of exactly ReceiveBufferSize is echoed");
                }
                long nextMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nextAt);
                System.out.printf("OversizedMessageDeviceTest: %d bytes into %d-byte receive buffers: sender's send "
                        + "%s, listener's receive %s; connection gone from the listener %d ms after the send; next "
                        + "client (%d bytes) connected, echoed and closed in %d ms%n", tooLarge.length, BUFFER,
                    sent.statusText(), failed.get(0).workCompletion().statusText(), goneMillis, BUFFER, nextMillis);
            }
            TestProbes.await("every connection is gone", Loopback.TIMEOUT, () -> listener.connectionCount() == 0);
            listener.close();
        }
    }

    private static byte[] pattern(int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 31 + 7);
        }
        return bytes;
    }
}
