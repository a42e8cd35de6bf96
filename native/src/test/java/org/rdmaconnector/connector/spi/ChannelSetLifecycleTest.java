package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.AsyncEvent;
import org.rdmaconnector.verbs.AsyncEventType;
import org.rdmaconnector.verbs.Device;
import org.rdmaconnector.verbs.jna.Layout;

/** A channel set's states (OPEN, DEVICE_REMOVED, CLOSED) and the one wording of a device removal, on the host. */
class ChannelSetLifecycleTest {
    private static final Device RXE1 = new Device("rxe1", 0x4c8bbefffe639a96L, 1);

    @Test
    void anOpenSetIsUsableAndHealthy() {
        ChannelSet.Lifecycle lifecycle = new ChannelSet.Lifecycle();
        assertEquals(ChannelSet.State.OPEN, lifecycle.state());
        lifecycle.ensureUsable("rdma_connect");
        assertNull(lifecycle.unhealthyReason());
    }

    @Test
    void aRemovedDeviceMakesEveryUseFailWithTheDeviceNamed() {
        ChannelSet.Lifecycle lifecycle = new ChannelSet.Lifecycle();
        DeviceRemoval removal = DeviceRemoval.onCmId(RXE1);
        assertTrue(lifecycle.deviceRemoved(removal));
        assertEquals(ChannelSet.State.DEVICE_REMOVED, lifecycle.state());
        RdmaException e = assertThrows(RdmaException.class, () -> lifecycle.ensureUsable("ibv_post_send"));
        assertEquals("ibv_post_send", e.function());
        assertEquals(Layout.ENODEV, e.errno());
        assertTrue(e.getMessage().startsWith("ibv_post_send failed: ENODEV (19): device removed: rxe1 (guid "
            + "4c8bbefffe639a96, index 1) (DEVICE_REMOVAL on a CM id;"), e.getMessage());
        assertTrue(e.getMessage().contains("close the RdmaConnection"), e.getMessage());
        assertEquals(removal.description(), lifecycle.unhealthyReason());
    }

    @Test
    void theFirstRemovalIsKeptAndAClosedSetIsNotRemovedAnyMore() {
        ChannelSet.Lifecycle lifecycle = new ChannelSet.Lifecycle();
        DeviceRemoval first = DeviceRemoval.onCmId(RXE1);
        assertTrue(lifecycle.deviceRemoved(first));
        assertFalse(lifecycle.deviceRemoved(DeviceRemoval.unlisted(RXE1)), "a second id's DEVICE_REMOVAL");
        assertSame(first, lifecycle.removal());
        assertTrue(lifecycle.close());
        assertFalse(lifecycle.close(), "twice");
        assertEquals(ChannelSet.State.CLOSED, lifecycle.state());
        assertEquals("the RDMA channel set is closed",
            assertThrows(IllegalStateException.class, () -> lifecycle.ensureUsable("ibv_reg_mr")).getMessage());
        assertEquals("closed", lifecycle.unhealthyReason());

        ChannelSet.Lifecycle closedFirst = new ChannelSet.Lifecycle();
        closedFirst.close();
        assertFalse(closedFirst.deviceRemoved(first));
        assertEquals(ChannelSet.State.CLOSED, closedFirst.state());
    }

    @Test
    void aRemovalReachesPoolsAndContainersAsDeviceFatalWithTheSameWords() {
        DeviceRemoval removal = DeviceRemoval.unlisted(RXE1);
        AsyncEvent event = removal.asyncEvent();
        assertEquals(new AsyncEvent("rxe1", AsyncEventType.DEVICE_FATAL, Layout.IBV_EVENT_DEVICE_FATAL, 0,
            "device removed: rxe1 (guid 4c8bbefffe639a96, index 1) (no longer listed by the kernel; rdma link delete, "
                + "hot-unplug or a driver reset); what is open on it must be closed"), event);
        assertTrue(event.type().isFatal());
        assertTrue(removal.error("rdma_connect").getMessage().contains(removal.description()));
    }
}
