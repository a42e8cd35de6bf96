package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.AcceptPolicy;

/** The settings of channel sets and listeners: defaults, parsing, and messages that name the property. */
class SettingsTest {
    @Test
    void channelDefaultsAreValidAndAnEmptyDeviceMeansTheFirstActive() {
        assertEquals(List.of(), ChannelSettings.DEFAULTS.problems());
        assertEquals(null, new ChannelSettings("  ", 1, 256, 0, 64, 64, 0, 1).deviceName());
        assertEquals("the first device with port 1 ACTIVE", ChannelSettings.DEFAULTS.deviceDescription());
    }

    @Test
    void channelProblemsNameEachProperty() {
        ChannelSettings bad = new ChannelSettings("mlx5_0", 0, 100, -1, 80, 40, 0, 0);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, bad::validate);
        assertEquals("invalid RDMA connection settings: PortNumber must be from 1 to 255, was 0; CompletionVector "
            + "must be from 0 to 1023, was -1; MaxRegisteredBytes must be positive, was 0; CqDepth (100) must hold "
            + "MaxSendWr + MaxRecvWr (80 + 40) completions of one endpoint", e.getMessage());
    }

    @Test
    void listenerSettingsFromActivationSpecValues() {
        ListenerSettings s = ListenerSettings.of("10.0.0.1", 7471, null, "endpoint-decides", "10.0.0.0/24, fd00::/8",
            null, null, null);
        assertEquals(List.of(), s.problems());
        assertEquals(AcceptPolicy.ENDPOINT_DECIDES, s.acceptPolicy());
        assertEquals(16, s.backlog());
        assertEquals(16, s.receiveBufferCount());
        assertEquals(4096, s.receiveBufferSize());
        assertEquals(8, s.maxConcurrentDeliveries());
        assertEquals("[10.0.0.0/24, fd00:0:0:0:0:0:0:0/8]", s.allowedPeers().toString());
    }

    @Test
    void listenerProblemsNameEachProperty() {
        ListenerSettings s = ListenerSettings.of("rdma-host.example", 0, 0, null, null, 0, 0, 0);
        assertEquals(List.of("Address 'rdma-host.example' is not an IP address",
            "Port must be from 1 to 65535, was 0", "Backlog must be from 1 to 65535, was 0",
            "ReceiveBufferCount must be from 1 to 4096, was 0", "ReceiveBufferSize must be from 1 to 16777216, was 0",
            "MaxConcurrentDeliveries must be from 1 to 1024, was 0"), s.problems());
        assertEquals(List.of("Address must be set (an IP address of an RDMA device, or 0.0.0.0)"),
            ListenerSettings.of(null, 1, null, null, null, null, null, null).problems());
    }

    @Test
    void unknownAcceptPolicyNamesTheChoices() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> ListenerSettings.of("10.0.0.1", 1, null, "maybe", null, null, null, null));
        assertEquals("accept policy 'maybe' is not one of [accept, reject, endpoint-decides]", e.getMessage());
        assertEquals(AcceptPolicy.ENDPOINT_DECIDES, AcceptPolicy.parse(" Endpoint_Decides "));
    }

    @Test
    void cidrBlocksContainTheirAddressesOnly() throws Exception {
        Cidr block = Cidr.parse("10.0.0.77/25");
        assertEquals("10.0.0.0/25", block.toString());
        assertTrue(block.contains(InetAddress.getByName("10.0.0.127")));
        assertFalse(block.contains(InetAddress.getByName("10.0.0.128")));
        assertFalse(Cidr.parse("fd00::/8").contains(InetAddress.getByName("10.0.0.1")));
        assertTrue(Cidr.parse("0.0.0.0/0").contains(InetAddress.getByName("192.168.1.1")));
        assertTrue(Cidr.parse("10.0.0.9").contains(InetAddress.getByName("10.0.0.9")));
        assertFalse(Cidr.parse("10.0.0.9").contains(InetAddress.getByName("10.0.0.8")));
    }

    @Test
    void malformedPeersAreNamed() {
        assertEquals("allowed peer 'rdma-host' " + Cidr.NOT_AN_ADDRESS,
            assertThrows(IllegalArgumentException.class, () -> Cidr.parse("rdma-host")).getMessage());
        assertEquals("allowed peer '10.0.0.0/33': prefix length must be from 0 to 32",
            assertThrows(IllegalArgumentException.class, () -> Cidr.parse("10.0.0.0/33")).getMessage());
        assertEquals("allowed peer '10.0.0.0/x' has no valid prefix length",
            assertThrows(IllegalArgumentException.class, () -> Cidr.parse("10.0.0.0/x")).getMessage());
    }

    @Test
    void peersFilterOnlyWhenAListIsGiven() throws Exception {
        InetAddress peer = InetAddress.getByName("10.0.1.5");
        assertTrue(ListenerSettings.of("10.0.0.1", 1, null, null, "", null, null, null).allows(peer));
        assertFalse(ListenerSettings.of("10.0.0.1", 1, null, null, "10.0.0.0/24", null, null, null).allows(peer));
        assertTrue(ListenerSettings.of("10.0.0.1", 1, null, null, "10.0.0.0/24 10.0.1.0/24", null, null, null)
            .allows(peer));
    }

    @Test
    void activationsShareAListenerWhenOnlyTheirConcurrencyDiffers() {
        ListenerSettings a = ListenerSettings.of("10.0.0.1", 9, null, null, null, null, null, 1);
        assertTrue(a.sharesListenerWith(ListenerSettings.of(" 10.0.0.1 ", 9, null, null, null, null, null, 4)));
        assertFalse(a.sharesListenerWith(ListenerSettings.of("10.0.0.1", 9, null, "reject", null, null, null, 1)));
    }
}
