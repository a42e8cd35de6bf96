package org.rdmaconnector.ra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.resource.ResourceException;
import jakarta.resource.spi.InvalidPropertyException;
import jakarta.resource.spi.endpoint.MessageEndpointFactory;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.CmEventListener;
import org.rdmaconnector.connector.CompletionListener;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaConnectionFactory;
import org.rdmaconnector.connector.RdmaException;

/**
 * The adapter's own logic on the build host (no RDMA device) with test doubles of the container: it starts its loop
 * as Work, connections fail with the device and errno named, activations wait and show it in JMX, invalid
 * properties are named, endpoints are released, and stop leaves no thread.
 */
class AdapterTest {
    private final FakeContainer container = new FakeContainer();
    private final RdmaResourceAdapter ra = new RdmaResourceAdapter();

    @BeforeEach
    void start() throws Exception {
        ra.start(container);
    }

    @AfterEach
    void stop() throws Exception {
        ra.stop();
        for (Thread thread : container.threads) {
            thread.join(10_000);
        }
        assertTrue(container.allThreadsEnded(), "stop ends every thread the adapter took from the WorkManager");
    }

    private RdmaManagedConnectionFactory mcf(String device) throws ResourceException {
        RdmaManagedConnectionFactory mcf = new RdmaManagedConnectionFactory();
        mcf.setDeviceName(device);
        mcf.setResourceAdapter(ra);
        return mcf;
    }

    @Test
    void theEventLoopRunsAsWorkOfTheContainer() {
        assertEquals(1, container.threads.size(), "one long-running Work: the event loop");
        assertTrue(container.threads.get(0).isAlive());
    }

    @Test
    void aConnectionWithoutTheDeviceFailsWithTheDeviceAndErrnoNamed() throws Exception {
        RdmaConnectionFactory factory = (RdmaConnectionFactory) mcf("mlx5_0").createConnectionFactory();
        RdmaException e = assertThrows(RdmaException.class, factory::getConnection);
        assertTrue(e.getMessage().startsWith("cannot open RDMA channels on device mlx5_0: rdma_get_devices failed: "
            + "ENODEV (19): no RDMA device is present on this machine"), e.getMessage());
        assertEquals("ENODEV", e.errnoName());
        assertEquals("rdma_get_devices", e.function());

        RdmaException first = assertThrows(RdmaException.class,
            () -> ((RdmaConnectionFactory) mcf(null).createConnectionFactory()).getConnection());
        assertTrue(first.getMessage().startsWith("cannot open RDMA channels on the first device with port 1 ACTIVE: "),
            first.getMessage());
    }

    @Test
    void theAdaptersErrorReachesTheApplicationAlsoWhenThePoolWrapsIt() throws Exception {
        RdmaManagedConnectionFactory mcf = mcf("mlx5_0");
        RdmaConnectionFactory factory = (RdmaConnectionFactory) mcf.createConnectionFactory((m, info) -> {
            try {
                return m.createManagedConnection(null, info).getConnection(null, info);
            } catch (ResourceException e) {
                throw new ResourceException("IJ000453: Unable to get managed connection", e);
            }
        });
        RdmaException e = assertThrows(RdmaException.class, factory::getConnection);
        assertTrue(e.getMessage().startsWith("cannot open RDMA channels on device mlx5_0: "), e.getMessage());
        assertEquals("ENODEV", e.errnoName());
        assertEquals("IJ000453: Unable to get managed connection", e.getSuppressed()[0].getMessage());
    }

    @Test
    void aConnectionAfterTheAdapterStoppedIsAnIllegalStateWithTheAdaptersReason() throws Exception {
        RdmaConnectionFactory factory = (RdmaConnectionFactory) mcf("mlx5_0").createConnectionFactory();
        ra.stop();
        IllegalStateException e = assertThrows(IllegalStateException.class, factory::getConnection);
        assertEquals("no RDMA connection from RdmaConnectionFactory[device mlx5_0]: cannot open RDMA channels on "
            + "device mlx5_0: the RDMA resource adapter is not started", e.getMessage());
        RdmaResourceException adapter = assertInstanceOf(RdmaResourceException.class, e.getCause());
        assertEquals(null, adapter.getErrorCode());
        assertEquals(null, adapter.getFunction());
        assertTrue(adapter.getCause() instanceof IllegalStateException);
    }

    @Test
    void factoriesAreEqualByTheirPropertiesAndInvalidOnesAreNamed() throws Exception {
        RdmaManagedConnectionFactory a = mcf("rxe0");
        RdmaManagedConnectionFactory b = mcf("rxe0");
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        b.setMaxSendWr(32);
        assertNotEquals(a, b);
        a.setCqDepth(8);
        InvalidPropertyException e = assertThrows(InvalidPropertyException.class, a::createConnectionFactory);
        assertEquals("invalid RDMA connection definition: CqDepth (8) must hold MaxSendWr + MaxRecvWr (64 + 64) "
            + "completions of one endpoint", e.getMessage());
        assertEquals(List.of("cqDepth"), invalidProperties(e));
        RdmaManagedConnectionFactory unassociated = new RdmaManagedConnectionFactory();
        assertTrue(assertThrows(ResourceException.class, () -> unassociated.createManagedConnection(null, null))
            .getMessage().startsWith("the RDMA connection factory is not associated"));
        assertEquals(null, a.matchManagedConnections(Set.of(), null, null));
    }

    @Test
    void activationSpecsNameEveryInvalidProperty() {
        RdmaActivationSpec spec = new RdmaActivationSpec();
        spec.setAddress("rdma-host");
        spec.setReceiveBufferCount(0);
        InvalidPropertyException e = assertThrows(InvalidPropertyException.class, spec::validate);
        assertEquals("invalid RDMA activation: Address 'rdma-host' is not an IP address; Port must be set; "
            + "ReceiveBufferCount must be from 1 to 4096, was 0", e.getMessage());
        assertEquals(List.of("address", "port", "receiveBufferCount"), invalidProperties(e));
        spec.setAddress("10.0.0.1");
        spec.setPort(7471);
        spec.setReceiveBufferCount(null);
        spec.setAcceptPolicy("sometimes");
        InvalidPropertyException policy = assertThrows(InvalidPropertyException.class, spec::validate);
        assertEquals("invalid RDMA activation: accept policy 'sometimes' is not one of [accept, reject, "
            + "endpoint-decides]", policy.getMessage());
        assertEquals(List.of("acceptPolicy"), invalidProperties(policy));
    }

    @Test
    void aBadPolicyAndPeerListAreNamedTogetherWithTheRangeProblems() {
        RdmaActivationSpec spec = new RdmaActivationSpec();
        spec.setAddress("10.0.0.1");
        spec.setPort(7471);
        spec.setAcceptPolicy("sometimes");
        spec.setAllowedPeers("192.168.1/24");
        spec.setMaxConnections(4);
        spec.setMaxConnectionsPerPeer(5);
        InvalidPropertyException e = assertThrows(InvalidPropertyException.class, spec::validate);
        assertEquals("invalid RDMA activation: MaxConnectionsPerPeer (5) must not be larger than MaxConnections (4); "
            + "accept policy 'sometimes' is not one of [accept, reject, endpoint-decides]; allowed peer "
            + "'192.168.1/24' is not a full IPv4 address (four decimal octets) or an IPv6 address", e.getMessage());
        assertEquals(List.of("maxConnectionsPerPeer", "acceptPolicy", "allowedPeers"), invalidProperties(e));
    }

    @Test
    void theConnectionLimitsReachTheListenerSettings() throws Exception {
        RdmaActivationSpec spec = new RdmaActivationSpec();
        spec.setAddress("10.0.0.1");
        spec.setPort(7471);
        assertEquals(64, spec.settings().maxConnections());
        assertEquals(16, spec.settings().maxConnectionsPerPeer());
        spec.setMaxConnections(100);
        spec.setMaxConnectionsPerPeer(2);
        assertEquals(100, spec.settings().maxConnections());
        assertEquals(2, spec.settings().maxConnectionsPerPeer());
        spec.setMaxConnections(0);
        assertEquals(List.of("maxConnections", "maxConnectionsPerPeer"),
            invalidProperties(assertThrows(InvalidPropertyException.class, spec::validate)));
    }

    @Test
    void deliverSendCompletionsReachesTheListenerSettings() throws Exception {
        RdmaActivationSpec spec = new RdmaActivationSpec();
        spec.setAddress("10.0.0.1");
        spec.setPort(7471);
        assertEquals(true, spec.settings().deliverSendCompletions(), "the default");
        spec.setDeliverSendCompletions(false);
        assertEquals(false, spec.settings().deliverSendCompletions());
    }

    private static List<String> invalidProperties(InvalidPropertyException e) {
        return Arrays.stream(e.getInvalidPropertyDescriptors()).map(java.beans.PropertyDescriptor::getName).toList();
    }

    @Test
    void anActivationWithoutADeviceWaitsShowsItInJmxAndIsRemovedOnDeactivation() throws Exception {
        RdmaActivationSpec spec = new RdmaActivationSpec();
        spec.setAddress("10.0.0.1");
        spec.setPort(7471);
        FakeContainer.Endpoints seen = new FakeContainer.Endpoints();
        MessageEndpointFactory factory = FakeContainer.factory(CmEventListener.class, false, seen, args -> { });
        ra.endpointActivation(factory, spec);
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName("org.rdmaconnector:type=Activation,endpoint=\"test-CmEventListener\","
            + "listener=\"10.0.0.1:7471\"");
        assertEquals("WAITING_FOR_DEVICE", server.getAttribute(name, "State"));
        String detail = (String) server.getAttribute(name, "StateDetail");
        assertTrue(detail.startsWith("waiting: rdma_create_event_channel failed: ENODEV (19)"), detail);
        assertEquals(0L, server.getAttribute(name, "Delivered"));
        ra.endpointDeactivation(factory, spec);
        assertTrue(!server.isRegistered(name), "deactivation removes the JMX view");
        assertEquals(0, seen.created.get());
    }

    @Test
    void anActivationTakesTheAdaptersSetupRetryUnlessItSetsItsOwnAndStartsPausedWhenAsked() throws Exception {
        ra.setSetupAttempts(2);
        ra.setSetupIntervalMillis(50);
        RdmaActivationSpec spec = new RdmaActivationSpec();
        spec.setAddress("10.0.0.1");
        spec.setPort(7476);
        spec.setResourceAdapter(ra);
        assertEquals(new org.rdmaconnector.connector.spi.SetupRetry(50, 30_000, 2), spec.settings().setupRetry());
        spec.setSetupAttempts(0);
        assertEquals(0, spec.settings().setupRetry().attempts(), "the activation's own wins");
        spec.setSetupAttempts(null);
        spec.setDeliveryActive(false);
        MessageEndpointFactory factory = FakeContainer.factory(CmEventListener.class, false,
            new FakeContainer.Endpoints(), args -> { });
        ra.endpointActivation(factory, spec);
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName("org.rdmaconnector:type=Activation,endpoint=\"test-CmEventListener\","
            + "listener=\"10.0.0.1:7476\"");
        try {
            assertEquals(false, server.getAttribute(name, "DeliveryActive"));
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
            while (!"GAVE_UP".equals(server.getAttribute(name, "State")) && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(10_000_000); // polled until the deadline
            }
            assertEquals("GAVE_UP", server.getAttribute(name, "State"), "gave up after 2 tries");
            String detail = (String) server.getAttribute(name, "StateDetail");
            assertTrue(detail.startsWith("gave up after 2 tries (SetupAttempts 2): rdma_create_event_channel "
                + "failed: ENODEV (19)"), detail);
            assertEquals(true, server.invoke(name, "resumeDelivery", null, null));
        } finally {
            ra.endpointDeactivation(factory, spec);
        }
    }

    @Test
    void invalidSetupRetryPropertiesOfTheAdapterAreRefusedAtStartByName() {
        RdmaResourceAdapter other = new RdmaResourceAdapter();
        other.setSetupIntervalMillis(5000);
        other.setSetupMaxIntervalMillis(1000);
        jakarta.resource.spi.ResourceAdapterInternalException e = assertThrows(
            jakarta.resource.spi.ResourceAdapterInternalException.class, () -> other.start(new FakeContainer()));
        assertEquals("invalid RDMA resource adapter settings: SetupMaxIntervalMillis (1000) must not be smaller "
            + "than SetupIntervalMillis (5000)", e.getMessage());
        assertFalse(other.equals(ra), "adapters with other properties are not equal");
    }

    @Test
    void theBusyPollBudgetIsTheEnginesAndAnInvalidOneIsRefusedAtStartByName() throws Exception {
        assertEquals(org.rdmaconnector.verbs.engine.EventEngine.DEFAULT_BUSY_POLL, ra.engine().busyPoll());
        RdmaResourceAdapter tuned = new RdmaResourceAdapter();
        tuned.setBusyPollMicros(0);
        tuned.start(new FakeContainer());
        try {
            assertEquals(java.time.Duration.ZERO, tuned.engine().busyPoll(), "0 turns busy polling off");
        } finally {
            tuned.stop();
        }
        RdmaResourceAdapter other = new RdmaResourceAdapter();
        other.setBusyPollMicros(100_001);
        jakarta.resource.spi.ResourceAdapterInternalException e = assertThrows(
            jakarta.resource.spi.ResourceAdapterInternalException.class, () -> other.start(new FakeContainer()));
        assertEquals("invalid RDMA resource adapter settings: BusyPollMicros must be from 0 to 100000, was 100001",
            e.getMessage());
        assertFalse(other.equals(ra), "adapters with other properties are not equal");
    }

    @Test
    void theWaiterHoldIsTheEnginesAndAnInvalidOneIsRefusedAtStartByName() throws Exception {
        assertEquals(org.rdmaconnector.verbs.engine.EventEngine.DEFAULT_WAITER_HOLD, ra.engine().waiterHold());
        RdmaResourceAdapter tuned = new RdmaResourceAdapter();
        tuned.setWaiterHoldMicros(250);
        tuned.start(new FakeContainer());
        try {
            assertEquals(java.time.Duration.ofNanos(250_000), tuned.engine().waiterHold());
        } finally {
            tuned.stop();
        }
        RdmaResourceAdapter other = new RdmaResourceAdapter();
        other.setWaiterHoldMicros(-1);
        jakarta.resource.spi.ResourceAdapterInternalException e = assertThrows(
            jakarta.resource.spi.ResourceAdapterInternalException.class, () -> other.start(new FakeContainer()));
        assertEquals("invalid RDMA resource adapter settings: WaiterHoldMicros must be from 0 to 1000000, was -1",
            e.getMessage());
        assertFalse(other.equals(ra), "adapters with other properties are not equal");
        assertFalse(tuned.equals(ra), "a tuned hold is a property too");
    }

    @Test
    void aSecondActivationOnTheAddressWithOtherSettingsIsRefused() throws Exception {
        RdmaActivationSpec spec = new RdmaActivationSpec();
        spec.setAddress("10.0.0.1");
        spec.setPort(7472);
        ra.endpointActivation(FakeContainer.factory(CmEventListener.class, false, new FakeContainer.Endpoints(),
            args -> { }), spec);
        RdmaActivationSpec other = new RdmaActivationSpec();
        other.setAddress("10.0.0.1");
        other.setPort(7472);
        other.setAcceptPolicy("reject");
        ResourceException e = assertThrows(ResourceException.class, () -> ra.endpointActivation(
            FakeContainer.factory(CompletionListener.class, false, new FakeContainer.Endpoints(), args -> { }),
            other));
        assertTrue(e.getMessage().contains("endpoints on one address must agree"), e.getMessage());
    }

    @Test
    void deliveriesWrapTheCallInBeforeAndAfterWhenTransactedAndReleaseAnEndpointThatThrew() throws Exception {
        FakeContainer.Endpoints seen = new FakeContainer.Endpoints();
        MessageEndpointSink sink = new MessageEndpointSink(FakeContainer.factory(CmEventListener.class, true, seen,
            args -> {
                throw new IllegalStateException("the bean failed");
            }));
        ConnectionEvent event = java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {ConnectionEvent.class}, (p, m, a) -> null) instanceof ConnectionEvent c ? c : null;
        assertThrows(IllegalStateException.class, () -> sink.deliver(event));
        assertEquals(List.of("beforeDelivery", "onCmEvent", "afterDelivery"), seen.calls);
        assertEquals(1, seen.created.get());
        assertEquals(1, seen.released.get(), "released although the bean threw");
        assertEquals("test-CmEventListener", sink.name());
    }

    @Test
    void handlesAreTheConnectionInterfaceOfTheDescriptor() {
        assertTrue(RdmaConnection.class.isAssignableFrom(org.rdmaconnector.connector.spi.ConnectionHandle.class));
    }
}
