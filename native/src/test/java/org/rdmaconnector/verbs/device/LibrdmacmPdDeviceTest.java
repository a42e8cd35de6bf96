package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.PortSpace;
import org.rdmaconnector.verbs.TestProbes;
import org.rdmaconnector.verbs.jna.RdmaCma;

/**
 * librdmacm's own protection domain per device (RELIABILITY.md, "librdmacm's protection domain"). librdmacm 44
 * allocates it when an id is bound to the device ({@code ucma_get_device}) and frees it only when an id's reference is
 * the last one given back ({@code ucma_put_device}); {@code rdma_free_devices} lowers the same count to zero without
 * freeing it. Whatever order ids and device context views end in, and however connects fail, nothing may be left.
 */
@Tag("device")
@Timeout(180)
class LibrdmacmPdDeviceTest {
    private static final Duration FAIL_FAST = Duration.ofSeconds(2);

    /**
     * The minimal reproduction, on librdmacm alone: an id bound to the device while a device list is held, the id
     * destroyed, then the list freed. The count of references is back at zero, yet the protection domain stays until
     * another id takes a reference and gives it back.
     */
    @Test
    void aDeviceListGivenBackLastLeavesLibrdmacmsProtectionDomain() throws Exception {
        Baseline before = Baseline.afterWarmUp();
        int pd = pd(before.rdmaResources());
        try (EventChannel events = EventChannel.create()) {
            CmId id = bound(events);
            assertEquals(pd + 1, pd(), "an id bound to the device makes librdmacm allocate its protection domain");
            long list = RdmaCma.rdma_get_devices(0);
            assertTrue(list != 0, "rdma_get_devices");
            id.close();
            assertEquals(pd + 1, pd(), "the list still refers to the device");
            RdmaCma.rdma_free_devices(list);
            int leftOver = pd();
            bound(events).close(); // the next id's reference, given back last, frees it
            int afterAnId = pd();
            System.out.println("LibrdmacmPdDeviceTest: librdmacm alone, list freed last: pd " + pd + " before, "
                + leftOver + " after rdma_free_devices, " + afterAnId + " after another id was bound and destroyed");
            assertEquals(pd + 1, leftOver, "librdmacm 44 frees no protection domain in rdma_free_devices: if this "
                + "fails, librdmacm changed, and DeviceContext's anchor id may no longer be needed");
            assertEquals(pd, afterAnId, "an id's reference given back last frees it");
        }
    }

    /** The same order through our objects: an id, a view of its device opened, the id closed, then the view. */
    @Test
    void aViewClosedAfterTheLastIdLeavesNothing() throws Exception {
        Baseline before = Baseline.afterWarmUp();
        try (EventChannel events = EventChannel.create()) {
            CmId id = bound(events);
            DeviceContext view = DeviceContext.open(id.deviceName());
            id.close();
            view.close();
        }
        Baseline after = Baseline.awaitBack(before);
        System.out.println("LibrdmacmPdDeviceTest: a view closed after the last id: before " + before.rdmaResources()
            + ", after " + after.rdmaResources());
        assertEquals(before.rdmaResources(), after.rdmaResources());
        assertTrue(after.isBackTo(before), "before " + before + ", after " + after);
    }

    /**
     * Connects from a channel set that fail each way a peer can make them fail: nobody listening (REJECTED), a peer
     * that never answers (our timeout), an address of the subnet that nobody has (ADDR_ERROR or our timeout); then
     * one that succeeds. After the set and the stack are closed, rdma res is back at the exact baseline.
     */
    @Test
    void failedConnectsLeaveNoProtectionDomain() throws Exception {
        Baseline before = Baseline.afterWarmUp();
        List<String> failures = new ArrayList<>();
        try (ConnectorStack stack = new ConnectorStack();
             EventChannel silent = EventChannel.create()) {
            // a listener whose CONNECT_REQUESTs nobody reads: its peer never gets an answer
            CmId unanswering = Loopback.listen(silent);
            try (ChannelSet set = ChannelSet.open(ChannelSettings.DEFAULTS, stack.devices, stack.engine)) {
                failures.add(failedConnect(set, new InetSocketAddress(Loopback.ADDRESS, Loopback.nextPort())));
                failures.add(failedConnect(set, unanswering.localAddress()));
                failures.add(failedConnect(set, new InetSocketAddress(unassignedAddress(), Loopback.nextPort())));
            }
            unanswering.close();
        }
        Baseline after = Baseline.awaitBack(before);
        System.out.println("LibrdmacmPdDeviceTest: failed connects " + failures + "; before " + before
            + ", after " + after);
        assertEquals(pd(before.rdmaResources()), pd(after.rdmaResources()), "protection domains");
        assertTrue(after.isBackTo(before), "before " + before + ", after " + after);
    }

    /**
     * The connector as a whole, as the two-host tests end it: an echoing listener and a channel set of one runtime,
     * a connection echoed and closed, one refused, then the set, the listener and the runtime closed. rdma res is back
     * at the exact baseline (before the anchor ids, the shared device context given back after the last id left
     * pd one above it).
     */
    @Test
    void aRuntimeClosedAfterItsConnectionsLeavesNoProtectionDomain() throws Exception {
        Baseline before = Baseline.afterWarmUp();
        String refused;
        try (ConnectorStack stack = new ConnectorStack()) {
            int port = Loopback.nextPort();
            Activation echo = stack.hub.activate(ListenerSettings.of(Loopback.ADDRESS, port, null, "accept", null, 4,
                256, 2), Recorder.echo());
            TestProbes.await("listening", Loopback.TIMEOUT, () -> echo.state() == Activation.State.LISTENING);
            try (ChannelSet set = ChannelSet.open(ChannelSettings.DEFAULTS, stack.devices, stack.engine)) {
                try (RdmaEndpoint endpoint = set.connect(new InetSocketAddress(Loopback.ADDRESS, port),
                    Loopback.TIMEOUT)) {
                    WorkRequest reply = endpoint.receive();
                    byte[] message = "librdmacm's pd".getBytes(StandardCharsets.UTF_8);
                    assertNotNull(endpoint.send(message).await(Loopback.TIMEOUT), "sent");
                    assertNotNull(reply.await(Loopback.TIMEOUT), "echoed");
                    assertArrayEquals(message, reply.data());
                }
                refused = failedConnect(set, new InetSocketAddress(Loopback.ADDRESS, Loopback.nextPort()));
                TestProbes.await("the listener's connection is gone", Loopback.TIMEOUT,
                    () -> echo.connectionCount() == 0);
            }
            echo.close();
        }
        Baseline after = Baseline.awaitBack(before);
        System.out.println("LibrdmacmPdDeviceTest: a runtime closed after one echo and one refused connect (" + refused
            + "): before " + before + ", after " + after);
        assertEquals(pd(before.rdmaResources()), pd(after.rdmaResources()), "protection domains");
        assertTrue(after.isBackTo(before), "before " + before + ", after " + after);
    }

    private static String failedConnect(ChannelSet set, InetSocketAddress remote) {
        RdmaException e = assertThrows(RdmaException.class, () -> {
            try (RdmaEndpoint endpoint = set.connect(remote, FAIL_FAST)) {
                endpoint.isConnected();
            }
        }, "a connect to " + remote);
        return e.getMessage();
    }

    /** An id bound to the test address, so to the device (rdma_bind_addr takes librdmacm's reference). */
    private static CmId bound(EventChannel events) {
        CmId id = events.createId(PortSpace.TCP);
        id.bind(new InetSocketAddress(Loopback.ADDRESS, 0));
        assertTrue(id.deviceName() != null, "bound to a device");
        return id;
    }

    /** The test address with its last byte 77: in the guest's own subnet, and nobody's. */
    private static String unassignedAddress() {
        String a = Loopback.ADDRESS;
        return a.substring(0, a.lastIndexOf('.') + 1) + "77";
    }

    private static int pd() throws IOException, InterruptedException {
        return pd(RdmaRes.counts());
    }

    private static int pd(Map<String, Integer> counts) {
        return counts.getOrDefault("pd", 0);
    }
}
