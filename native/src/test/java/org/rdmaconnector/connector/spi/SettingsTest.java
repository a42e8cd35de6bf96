package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.AcceptPolicy;

/** The settings of channel sets and listeners: defaults, parsing, and messages that name the property. */
class SettingsTest {
    @Test
    void channelDefaultsAreValidAndAnEmptyDeviceMeansTheFirstActive() {
        assertEquals(List.of(), ChannelSettings.DEFAULTS.problems());
        assertEquals(new ChannelSettings(null, 1, 256, 0, 64, 64, 0, 64L << 20), ChannelSettings.DEFAULTS);
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
    void theAckTimeoutIsAnExponentFrom0To31() {
        assertEquals(0, ChannelSettings.DEFAULTS.ackTimeout(), "0: the RDMA CM's own");
        assertEquals(List.of(), ChannelSettings.DEFAULTS.withAckTimeout(31).problems());
        assertEquals(List.of(new SettingProblem("AckTimeout", "AckTimeout must be from 0 to 31, was 32")),
            ChannelSettings.DEFAULTS.withAckTimeout(32).problems());
        assertEquals(14, ListenerSettings.builder().address("10.0.0.1").port(1).ackTimeout(14).build().ackTimeout());
        assertEquals(List.of(new SettingProblem("AckTimeout", "AckTimeout must be from 0 to 31, was -1")),
            ListenerSettings.builder().address("10.0.0.1").port(1).ackTimeout(-1).problems());
        assertFalse(ListenerSettings.builder().address("10.0.0.1").port(1).ackTimeout(14).build().sharesListenerWith(
            ListenerSettings.builder().address("10.0.0.1").port(1).build()), "the accepted ids differ: not shared");
    }

    @Test
    void theRnrTimerIsInMicrosecondsWith0ForTheCmsOwn() {
        assertEquals(640, ChannelSettings.DEFAULTS.minRnrTimerMicros(), "rc_pingpong's 0.64 ms");
        assertEquals(640, ListenerSettings.builder().address("10.0.0.1").port(1).build().minRnrTimerMicros());
        assertEquals(List.of(), ChannelSettings.DEFAULTS.withMinRnrTimerMicros(0).problems());
        assertEquals(List.of(), ChannelSettings.DEFAULTS.withMinRnrTimerMicros(655_360).problems());
        assertEquals(List.of(new SettingProblem("MinRnrTimerMicros", "MinRnrTimerMicros must be 0 (the RDMA CM's "
            + "655.36 ms) or from 10 to 655360 microseconds, was 9")),
            ChannelSettings.DEFAULTS.withMinRnrTimerMicros(9).problems());
        assertEquals(List.of(new SettingProblem("MinRnrTimerMicros", "MinRnrTimerMicros must be 0 (the RDMA CM's "
            + "655.36 ms) or from 10 to 655360 microseconds, was 655361")),
            ListenerSettings.builder().address("10.0.0.1").port(1).minRnrTimerMicros(655_361).problems());
        assertEquals(100, ListenerSettings.builder().address("10.0.0.1").port(1).minRnrTimerMicros(100).build()
            .minRnrTimerMicros());
        assertFalse(ListenerSettings.builder().address("10.0.0.1").port(1).minRnrTimerMicros(100).build()
            .sharesListenerWith(ListenerSettings.builder().address("10.0.0.1").port(1).build()),
            "the accepted queue pairs differ: not shared");
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
        assertEquals(List.of(
            new SettingProblem("Address", "Address 'rdma-host.example' is not an IP address"),
            new SettingProblem("Port", "Port must be from 1 to 65535, was 0"),
            new SettingProblem("Backlog", "Backlog must be from 1 to 65535, was 0"),
            new SettingProblem("ReceiveBufferCount", "ReceiveBufferCount must be from 1 to 4096, was 0"),
            new SettingProblem("ReceiveBufferSize", "ReceiveBufferSize must be from 1 to 16777216, was 0"),
            new SettingProblem("MaxConcurrentDeliveries", "MaxConcurrentDeliveries must be from 1 to 1024, was 0")),
            s.problems());
        assertEquals(List.of(new SettingProblem("Address",
            "Address must be set (an IP address of an RDMA device, or 0.0.0.0)")),
            ListenerSettings.of(null, 1, null, null, null, null, null, null).problems());
        assertEquals("invalid RDMA listener settings: Address must be set (an IP address of an RDMA device, or "
            + "0.0.0.0)", assertThrows(IllegalArgumentException.class,
            () -> ListenerSettings.of(" ", 1, null, null, null, null, null, null).validate()).getMessage());
    }

    @Test
    void unknownAcceptPolicyNamesTheChoices() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> ListenerSettings.of("10.0.0.1", 1, null, "maybe", null, null, null, null));
        assertEquals("accept policy 'maybe' is not one of [accept, reject, endpoint-decides]", e.getMessage());
        assertEquals(AcceptPolicy.ENDPOINT_DECIDES, AcceptPolicy.parse(" Endpoint_Decides "));
    }

    @Test
    void theBuilderNamesAnUnknownPolicyAndBadPeersAmongTheOtherProblems() {
        ListenerSettings.Builder builder = ListenerSettings.builder().address("10.0.0.1").acceptPolicy("maybe")
            .allowedPeers("10.0.0.0/8, 10.1/16").backlog(0);
        assertEquals(List.of(new SettingProblem("Port", "Port must be set"),
            new SettingProblem("Backlog", "Backlog must be from 1 to 65535, was 0"),
            new SettingProblem("AcceptPolicy", "accept policy 'maybe' is not one of [accept, reject, "
                + "endpoint-decides]"),
            new SettingProblem("AllowedPeers", "allowed peer '10.1/16' " + Cidr.NOT_AN_ADDRESS)), builder.problems());
        assertEquals("invalid RDMA listener settings: Port must be set; Backlog must be from 1 to 65535, was 0; "
            + "accept policy 'maybe' is not one of [accept, reject, endpoint-decides]; allowed peer '10.1/16' "
            + Cidr.NOT_AN_ADDRESS, assertThrows(IllegalArgumentException.class, builder::build).getMessage());
        assertEquals("Port must be set", builder.problems().get(0).toString());
    }

    @Test
    void theBuilderAndOfGiveTheSameSettingsWithTheNewPropertiesAtTheirDefaults() {
        ListenerSettings built = ListenerSettings.builder().address("10.0.0.1").port(7471).acceptPolicy("reject")
            .allowedPeers("10.0.0.0/24").receiveBufferCount(4).build();
        assertEquals(ListenerSettings.of("10.0.0.1", 7471, null, "reject", "10.0.0.0/24", 4, null, null), built);
        assertEquals(64, built.maxConnections());
        assertEquals(16, built.maxConnectionsPerPeer());
        assertEquals(ListenerSettings.DEFAULT_MAX_CONNECTIONS, built.maxConnections());
        assertEquals(ListenerSettings.DEFAULT_MAX_CONNECTIONS_PER_PEER, built.maxConnectionsPerPeer());
    }

    @Test
    void connectionLimitsAreCheckedAndThePerPeerLimitFitsTheTotal() {
        ListenerSettings.Builder builder = ListenerSettings.builder().address("10.0.0.1").port(1);
        assertEquals(List.of(new SettingProblem("MaxConnections", "MaxConnections must be from 1 to 65535, was 0"),
            new SettingProblem("MaxConnectionsPerPeer", "MaxConnectionsPerPeer must be from 1 to 65535, was 65536")),
            builder.maxConnections(0).maxConnectionsPerPeer(65_536).problems().subList(0, 2));
        assertEquals(List.of(new SettingProblem("MaxConnectionsPerPeer",
            "MaxConnectionsPerPeer (9) must not be larger than MaxConnections (8)")),
            builder.maxConnections(8).maxConnectionsPerPeer(9).problems());
        assertEquals(List.of(), builder.maxConnections(65_535).maxConnectionsPerPeer(65_535).problems());
        assertEquals(List.of(new SettingProblem("MaxConnectionsPerPeer",
            "MaxConnectionsPerPeer (17) must not be larger than MaxConnections (8)")),
            ListenerSettings.builder().address("10.0.0.1").port(1).maxConnections(8).maxConnectionsPerPeer(17)
                .problems());
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
        assertTrue(a.sharesListenerWith(ListenerSettings.of("::ffff:10.0.0.1", 9, null, null, null, null, null, 2)));
        ListenerSettings.Builder b = ListenerSettings.builder().address("10.0.0.1").port(9);
        assertFalse(a.sharesListenerWith(b.maxConnections(32).build()));
        assertFalse(a.sharesListenerWith(b.maxConnections(null).maxConnectionsPerPeer(4).build()));
        assertTrue(a.sharesListenerWith(b.maxConnectionsPerPeer(null).maxConcurrentDeliveries(3).build()));
    }

    @Test
    void setupRetryDefaultsComeFromTheAdapterUnlessTheActivationSetsThemAndAreCheckedByName() {
        ListenerSettings.Builder b = ListenerSettings.builder().address("10.0.0.1").port(1);
        assertEquals(new SetupRetry(1000, 30_000, 0), b.build().setupRetry(), "1 s doubling to 30 s, forever");
        b.setupDefaults(new SetupRetry(500, 5000, 10));
        assertEquals(new SetupRetry(500, 5000, 10), b.build().setupRetry());
        b.setupAttempts(0);
        assertEquals(new SetupRetry(500, 5000, 0), b.build().setupRetry(), "the activation's own value wins");
        b.setupIntervalMillis(0).setupMaxIntervalMillis(100).setupAttempts(-1).setupDefaults(null);
        assertEquals(List.of(
            new SettingProblem("SetupIntervalMillis", "SetupIntervalMillis must be from 1 to 3600000, was 0"),
            new SettingProblem("SetupAttempts", "SetupAttempts must be from 0 to 1000000, was -1")), b.problems());
        b.setupIntervalMillis(200).setupAttempts(null);
        assertEquals(List.of(new SettingProblem("SetupMaxIntervalMillis",
            "SetupMaxIntervalMillis (100) must not be smaller than SetupIntervalMillis (200)")), b.problems());
        ListenerSettings retried = b.setupMaxIntervalMillis(null).build();
        assertFalse(retried.sharesListenerWith(ListenerSettings.builder().address("10.0.0.1").port(1).build()),
            "one listener retries one way");
    }

    @Test
    void deliverSendCompletionsIsTheListenersAndDefaultsToTrue() {
        ListenerSettings.Builder b = ListenerSettings.builder().address("10.0.0.1").port(1);
        assertTrue(b.build().deliverSendCompletions());
        ListenerSettings quiet = b.deliverSendCompletions(false).build();
        assertFalse(quiet.deliverSendCompletions());
        assertFalse(quiet.sharesListenerWith(b.deliverSendCompletions(null).build()), "one listener's connections "
            + "deliver their send completions or not, for every endpoint on it");
    }

    @Test
    void deliveryActiveIsTheEndpointsOwnAndDefaultsToTrue() {
        ListenerSettings.Builder b = ListenerSettings.builder().address("10.0.0.1").port(1);
        assertTrue(b.build().deliveryActive());
        ListenerSettings paused = b.deliveryActive(false).build();
        assertFalse(paused.deliveryActive());
        assertTrue(paused.sharesListenerWith(b.deliveryActive(null).build()), "a paused and an active endpoint "
            + "share a listener");
    }

    @Test
    void setupRetryPausesDoubleUpToTheLongestAndEndAfterTheAttempts() {
        SetupRetry retry = new SetupRetry(100, 1000, 6);
        assertEquals(List.of(100L, 200L, 400L, 800L, 1000L), java.util.stream.IntStream.rangeClosed(1, 5)
            .mapToObj(retry::pauseAfter).map(Duration::toMillis).toList());
        assertEquals(null, retry.pauseAfter(6), "the 6th failed try was the last");
        assertEquals(30_000L, SetupRetry.DEFAULTS.pauseAfter(1_000_000).toMillis(), "forever, at the longest pause");
    }
}
