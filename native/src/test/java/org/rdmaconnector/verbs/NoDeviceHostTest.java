package org.rdmaconnector.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIf;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.jna.Layout;

/**
 * What a machine without RDMA (the build hosts: no InfiniBand in the kernel) gets: rdma-core loads, and every entry
 * point fails with an {@link RdmaException} that names the call, the errno and what it means. On a machine with an
 * RDMA device these are skipped, loudly; the soft-RDMA VM tier covers that side.
 */
@DisabledIf(value = "hasRdmaDevice", disabledReason = "this machine has an RDMA device (/dev/infiniband): the "
    + "no-device errors cannot occur here; the device tests cover it")
class NoDeviceHostTest {
    static boolean hasRdmaDevice() {
        return Files.exists(Path.of("/dev/infiniband"));
    }

    @BeforeAll
    static void rdmaCoreLoads() {
        assertNull(Rdma.unavailabilityCause(), "rdma-core should load (libibverbs1, librdmacm1 installed)");
        assertTrue(Rdma.isAvailable());
        Rdma.ensureAvailable();
    }

    @Test
    void eventChannelFailsWithEnodevAndSaysNoDeviceIsPresent() {
        RdmaException e = assertThrows(RdmaException.class, EventChannel::create);
        assertEquals("rdma_create_event_channel", e.function());
        assertEquals(Layout.ENODEV, e.errno());
        assertEquals("ENODEV", e.errnoName());
        assertEquals("rdma_create_event_channel failed: ENODEV (19): no RDMA device is present on this machine",
            e.getMessage());
    }

    @Test
    void deviceListFailsWithEnosysAndSaysTheKernelHasNoRdma() {
        RdmaException e = assertThrows(RdmaException.class, Rdma::devices);
        assertEquals("ibv_get_device_list", e.function());
        assertEquals(Layout.ENOSYS, e.errno());
        assertTrue(e.getMessage().startsWith("ibv_get_device_list failed: ENOSYS (38): the kernel has no RDMA support"),
            e.getMessage());
    }

    @Test
    void openingADeviceNamesTheDeviceAndTheError() {
        RdmaException e = assertThrows(RdmaException.class, () -> DeviceContext.open("rxe0"));
        assertEquals("rdma_get_devices", e.function());
        assertEquals(Layout.ENODEV, e.errno());
        assertTrue(e.getMessage().contains("no RDMA device is present") && e.getMessage().contains("rxe0"),
            e.getMessage());
        RdmaException verbsOnly = assertThrows(RdmaException.class, () -> DeviceContext.openVerbsOnly("rxe0"));
        assertEquals(Layout.ENOSYS, verbsOnly.errno());
        assertTrue(verbsOnly.getMessage().contains("rxe0"), verbsOnly.getMessage());
        assertThrows(RdmaException.class, () -> new Device("rxe0", 0, -1).open());
        assertThrows(RdmaException.class, () -> Rdma.device("rxe0"));
    }
}
