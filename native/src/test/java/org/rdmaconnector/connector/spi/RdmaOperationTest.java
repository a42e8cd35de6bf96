package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.RemoteAccess;
import org.rdmaconnector.connector.RemoteRegion;
import org.rdmaconnector.connector.WorkRequest;

class RdmaOperationTest {
    private static final RemoteRegion WRITABLE = new RemoteRegion(0x10000, 4096, 7, Set.of(RemoteAccess.WRITE));
    private static final RemoteRegion READABLE = new RemoteRegion(0x20000, 4096, 8, Set.of(RemoteAccess.READ));

    private final StandInRegion local = new StandInRegion(1024);

    @Test
    void anOperationInsideBothRegionsNamesItsRemoteAddressAndKind() {
        RdmaOperation write = RdmaOperation.writeWithImmediate(local, 24, 1000, WRITABLE, 3096, 99, true);
        assertEquals(0x10000 + 3096, write.remoteAddress());
        assertEquals(WorkRequest.Kind.RDMA_WRITE, write.kind());
        assertEquals(99, write.immediateData());
        assertEquals(WorkRequest.Kind.RDMA_READ, RdmaOperation.read(local, 0, 1024, READABLE, 0, true).kind());
        assertEquals(0, RdmaOperation.write(local, 1024, 0, WRITABLE, 4096, true).length(), "empty ranges at the ends");
    }

    @Test
    void aPeersRegionWithoutTheAccessNeededIsRefusedByName() {
        String write = assertThrows(IllegalArgumentException.class,
            () -> RdmaOperation.write(local, 0, 16, READABLE, 0, true)).getMessage();
        assertTrue(write.startsWith("RDMA WRITE to the peer's RemoteRegion[address 0x20000") && write.endsWith(
            "is refused: the peer registered it without RemoteAccess.WRITE"), write);
        String read = assertThrows(IllegalArgumentException.class,
            () -> RdmaOperation.read(local, 0, 16, WRITABLE, 0, true)).getMessage();
        assertTrue(read.endsWith("without RemoteAccess.READ"), read);
        assertThrows(IllegalArgumentException.class, () -> RdmaOperation.writeWithImmediate(local, 0, 0,
            new RemoteRegion(0, 0, 0, Set.of()), 0, 1, true), "not even a notification to a region without access");
    }

    @Test
    void rangesOutsideTheirRegionsAreRefusedNamingTheSide() {
        assertEquals("local range [1000, 1000 + 25) is outside the local memory region of 1024 bytes",
            assertThrows(IllegalArgumentException.class,
                () -> RdmaOperation.write(local, 1000, 25, WRITABLE, 0, true)).getMessage());
        String remote = assertThrows(IllegalArgumentException.class,
            () -> RdmaOperation.read(local, 0, 1024, READABLE, 3073, true)).getMessage();
        assertTrue(remote.startsWith("remote range [3073, 3073 + 1024) is outside the peer's RemoteRegion"), remote);
        assertThrows(IllegalArgumentException.class, () -> RdmaOperation.write(local, -1, 1, WRITABLE, 0, true));
        assertThrows(IllegalArgumentException.class, () -> RdmaOperation.write(local, 0, -1, WRITABLE, 0, true));
        assertThrows(IllegalArgumentException.class, () -> RdmaOperation.write(local, 0, 1, WRITABLE, -1, true));
        assertThrows(IllegalArgumentException.class,
            () -> RdmaOperation.write(local, 0, 1, WRITABLE, Integer.MAX_VALUE, true), "no overflow past the end");
    }

    @Test
    void missingRegionsAndAClosedLocalOneAreRefused() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RdmaOperation.read(null, 0, 1, READABLE, 0, true))
            .getMessage().startsWith("local must not be null"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RdmaOperation.write(local, 0, 1, null, 0, true))
            .getMessage().startsWith("remote must not be null"));
        local.close();
        assertEquals("the local memory region of RDMA READ is closed", assertThrows(IllegalStateException.class,
            () -> RdmaOperation.read(local, 0, 1, READABLE, 0, true)).getMessage());
    }
}
