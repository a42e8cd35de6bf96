package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.DeviceAttributes;
import org.rdmaconnector.connector.PortAttributes;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.Access;
import org.rdmaconnector.verbs.CompletionChannel;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.Device;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.MemoryRegion;
import org.rdmaconnector.verbs.ProtectionDomain;
import org.rdmaconnector.verbs.Rdma;

/** Devices, ports, protection domains, memory, channels and the ownership tree on Soft-RoCE. */
@Tag("device")
@Timeout(120)
class DeviceResourcesDeviceTest {
    @Test
    void devicesPortsAndMemory() {
        List<Device> devices = Rdma.devices();
        assertFalse(devices.isEmpty());
        Device device = Rdma.device("rxe0");
        assertEquals(device, devices.stream().filter(d -> d.name().equals("rxe0")).findFirst().orElseThrow());
        try (DeviceContext context = device.open()) {
            DeviceAttributes attributes = context.query();
            assertEquals(1, attributes.physicalPortCount(), attributes.toString());
            assertTrue(attributes.maxCqe() > 0 && attributes.maxQp() > 0 && attributes.maxMr() > 0,
                attributes.toString());
            PortAttributes port = context.queryPort(1);
            assertTrue(port.isActive(), port.toString());
            assertTrue(port.isEthernet(), "Soft-RoCE is RoCE: " + port);
            assertTrue(context.completionVectorCount() >= 1);
            assertThrows(IllegalArgumentException.class, () -> context.queryPort(0));
            RdmaException noPort = assertThrows(RdmaException.class, () -> context.queryPort(2));
            assertEquals("ibv_query_port", noPort.function());

            ProtectionDomain pd = context.allocateProtectionDomain();
            MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(8192),
                EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
            assertEquals(8192, mr.length());
            assertTrue(mr.rkey() != 0, "remote access gives an rkey");
            assertThrows(IllegalArgumentException.class, () -> pd.register(ByteBuffer.allocate(16)));
            assertThrows(IllegalArgumentException.class,
                () -> pd.register(ByteBuffer.allocateDirect(16), EnumSet.of(Access.REMOTE_WRITE)));

            CompletionChannel channel = context.createCompletionChannel();
            CompletionQueue cq = context.createCompletionQueue(16, channel, 0);
            assertTrue(cq.capacity() >= 16);
            assertThrows(IllegalArgumentException.class,
                () -> context.createCompletionQueue(16, channel, context.completionVectorCount()));
            RdmaException busy = assertThrows(RdmaException.class, channel::close);
            assertEquals("EBUSY", busy.errnoName(), busy.getMessage());
            assertFalse(channel.isClosed(), "a failed destroy leaves the channel usable");
            channel.setNonBlocking(true);
            assertTrue(channel.isNonBlocking());
            assertNull(channel.getCqEvent(), "non-blocking and nothing pending");
            assertEquals(List.of(cq), channel.queues());

            context.close();
            assertTrue(mr.isClosed() && pd.isClosed() && cq.isClosed() && channel.isClosed());
            assertThrows(IllegalStateException.class, context::query);
            assertThrows(IllegalStateException.class, () -> cq.poll(1));
            context.close();
        }
        try (DeviceContext verbsOnly = DeviceContext.openVerbsOnly("rxe0")) {
            assertTrue(verbsOnly.isVerbsOnly());
            assertTrue(verbsOnly.queryPort(1).isActive());
            RdmaException missing = assertThrows(RdmaException.class, () -> DeviceContext.openVerbsOnly("mlx5_9"));
            assertEquals("ENODEV", missing.errnoName());
        }
        RdmaException missing = assertThrows(RdmaException.class, () -> DeviceContext.open("mlx5_9"));
        assertEquals("rdma_get_devices failed: ENODEV (19): no device named 'mlx5_9'; present: [rxe0]",
            missing.getMessage());
    }

    @Test
    void closingWithUnacknowledgedCompletionEventsDoesNotBlock() {
        Loopback link = Loopback.connect(2, 64);
        try {
            link.server.cq().requestNotify(false);
            link.sendAndAwait(8, 1);
            assertTrue(link.server.channel().awaitEvent(Loopback.TIMEOUT));
            assertSame(link.server.cq(), link.server.channel().getCqEvent());
            assertEquals(1, link.server.cq().unackedEvents(), "one event got and not acknowledged");
        } finally {
            // ibv_destroy_cq waits for every event to be acknowledged: the queue acks what it counted first
            assertTimeoutPreemptively(Duration.ofSeconds(30), link::close);
        }
        assertTrue(link.server.cq().isClosed());
        assertEquals(1, link.server.cq().ackedEvents());
    }
}
