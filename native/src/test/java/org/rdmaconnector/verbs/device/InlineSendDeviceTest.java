package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.Arrays;
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
 * MaxInlineData on rxe0: a staged message that fits the inline data the queue pair was granted is posted with
 * IBV_SEND_INLINE, larger ones from the registered slot, and both arrive intact; an inline post larger than the grant
 * is refused naming the limit, before it reaches the device.
 */
@Tag("device")
@Timeout(120)
class InlineSendDeviceTest {
    @Test
    void messagesUpToMaxInlineDataAndLargerOnesArriveIntact() throws Exception {
        try (ConnectorStack stack = new ConnectorStack()) {
            int port = Loopback.nextPort();
            Activation echo = stack.hub.activate(ListenerSettings.of(Loopback.ADDRESS, port, null, null, null, 4,
                2048, 1), Recorder.echo());
            TestProbes.await("listening", Loopback.TIMEOUT, () -> echo.state() == Activation.State.LISTENING);
            ChannelSettings inline64 = new ChannelSettings("rxe0", 1, 64, 0, 4, 4, 64, 1 << 20);
            try (ChannelSet set = ChannelSet.open(inline64, stack.devices, stack.engine)) {
                RdmaEndpoint endpoint = set.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT);
                for (int size : new int[] {1, 48, 64, 65, 2000}) {
                    byte[] message = new byte[size];
                    Arrays.fill(message, (byte) size);
                    WorkRequest reply = endpoint.receive();
                    WorkCompletion sent = endpoint.send(message).await(Loopback.TIMEOUT);
                    assertNotNull(sent, "send of " + size + " bytes");
                    assertTrue(sent.isSuccess(), size + " bytes: " + sent.statusText());
                    assertNotNull(reply.await(Loopback.TIMEOUT), "echo of " + size + " bytes");
                    assertArrayEquals(message, reply.data(), "echo of " + size + " bytes");
                }
                endpoint.close();
            }
            echo.close();
        }
    }

    @Test
    void anInlinePostLargerThanTheGrantIsRefusedNamingTheLimit() {
        try (Loopback connection = Loopback.connect(1, 64)) {
            int granted = connection.client.id().queuePair().capabilities().maxInlineData();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> connection.client.id()
                .queuePair().postSendInline(connection.client.buffer(), 0, granted + 1, 1, true));
            assertEquals("length " + (granted + 1) + " is more than the " + granted + " bytes of inline data this "
                + "queue pair was granted (MaxInlineData)", e.getMessage());
        }
    }
}
