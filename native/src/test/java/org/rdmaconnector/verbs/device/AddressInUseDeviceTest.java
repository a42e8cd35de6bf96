package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.PortSpace;
import org.rdmaconnector.verbs.TestProbes;

/**
 * A listener whose address and port another listening id holds says so (ADDRESS_IN_USE, not WAITING_FOR_DEVICE),
 * retries, and listens once the other lets go; the same address written as an IPv4-mapped IPv6 address joins the
 * listener instead of fighting it for the port.
 */
@Tag("device")
@Timeout(120)
class AddressInUseDeviceTest {
    @Test
    void aTakenAddressIsReportedAsSuchAndListenedOnOnceFree() throws Exception {
        try (ConnectorStack stack = new ConnectorStack()) {
            int port = Loopback.nextPort();
            Activation activation;
            try (EventChannel other = EventChannel.create()) {
                CmId holder = other.createId(PortSpace.TCP);
                holder.bind(new InetSocketAddress(Loopback.ADDRESS, port));
                holder.listen(1);
                activation = stack.hub.activate(ListenerSettings.of(Loopback.ADDRESS, port, null, null, null, 4, 64, 1),
                    new Recorder(null));
                assertEquals(Activation.State.ADDRESS_IN_USE, activation.state());
                assertTrue(activation.stateDetail().startsWith("waiting: rdma_bind_addr failed: EADDRINUSE (98)"),
                    activation.stateDetail());
            }
            TestProbes.await("listening once the other id is gone", Loopback.TIMEOUT,
                () -> activation.state() == Activation.State.LISTENING);
            Activation mapped = stack.hub.activate(ListenerSettings.of("::ffff:" + Loopback.ADDRESS, port, null, null,
                null, 4, 64, 1), new Recorder(null));
            assertEquals(Activation.State.LISTENING, mapped.state(), "the same listener: " + mapped.stateDetail());
            mapped.close();
            activation.close();
        }
    }
}
