package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.verbs.Access;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.MemoryRegion;
import org.rdmaconnector.verbs.QueuePair;

/**
 * The verbs under the connector's one-sided operations, on a {@link Loopback} connection over rxe0: ibv_post_send
 * with IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM (the server's posted receive completes with
 * IBV_WC_RECV_RDMA_WITH_IMM, the immediate data and IBV_WC_WITH_IMM) and IBV_WR_RDMA_READ, each compared byte for
 * byte; a READ into a region without LOCAL_WRITE is refused before it is posted.
 */
@Tag("device")
@Timeout(120)
class OneSidedVerbsDeviceTest {
    private static final int SLOT = 64;

    @Test
    void writeWriteWithImmediateAndReadMoveTheBytesTheyName() {
        try (Loopback link = Loopback.connect(2, SLOT)) {
            MemoryRegion target = link.server.pd().register(ByteBuffer.allocateDirect(4096),
                EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
            QueuePair qp = link.client.id().queuePair();
            MemoryRegion source = link.client.buffer();
            source.buffer().put(pattern(1, 2 * SLOT));
            target.buffer().put(pattern(2, 4096));

            qp.postWrite(source, 0, SLOT, target.remoteAddress() + 1000, target.rkey(), 11, true);
            assertCompleted(link.client.cq(), 11, WcOpcode.RDMA_WRITE);
            assertArrayEquals(pattern(1, SLOT), bytes(target, 1000, SLOT), "written at the remote address");

            qp.postWriteWithImmediate(source, SLOT, SLOT, target.remoteAddress() + 2000, target.rkey(), 0x01020304,
                12, true);
            assertCompleted(link.client.cq(), 12, WcOpcode.RDMA_WRITE);
            WorkCompletion received = assertCompleted(link.server.cq(), 0, WcOpcode.RECV_RDMA_WITH_IMM);
            assertTrue(received.hasImmediate(), received.toString());
            assertEquals(0x01020304, received.immediateData());
            assertEquals(SLOT, received.byteLength(), "byte_len is the write's length");
            assertArrayEquals(Arrays.copyOfRange(pattern(1, 2 * SLOT), SLOT, 2 * SLOT),
                bytes(target, 2000, SLOT));

            qp.postRead(source, 0, SLOT, target.remoteAddress() + 3000, target.rkey(), 13, true);
            assertCompleted(link.client.cq(), 13, WcOpcode.RDMA_READ);
            assertArrayEquals(Arrays.copyOfRange(pattern(2, 4096), 3000, 3000 + SLOT),
                bytes(source, 0, SLOT), "read from the remote address");

            MemoryRegion readOnly = link.client.pd().register(ByteBuffer.allocateDirect(SLOT),
                EnumSet.noneOf(Access.class));
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> qp.postRead(readOnly, 0, SLOT, target.remoteAddress(), target.rkey(), 14, true));
            assertTrue(refused.getMessage().contains("without LOCAL_WRITE"), refused.getMessage());
        }
    }

    /** Waits (bounded) for the next work completion of {@code cq}, which must be {@code wrId}'s, successful. */
    private static WorkCompletion assertCompleted(CompletionQueue cq, long wrId, WcOpcode opcode) {
        long deadline = System.nanoTime() + Loopback.TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            List<WorkCompletion> polled = cq.poll(1);
            if (!polled.isEmpty()) {
                WorkCompletion wc = polled.get(0);
                assertTrue(wc.isSuccess(), wc.statusText() + ": " + wc);
                assertEquals(wrId, wc.wrId(), wc.toString());
                assertEquals(opcode, wc.opcode(), wc.toString());
                return wc;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no work completion for " + wrId + " within " + Loopback.TIMEOUT);
    }

    private static byte[] bytes(MemoryRegion region, int offset, int length) {
        byte[] bytes = new byte[length];
        region.buffer().get(offset, bytes);
        return bytes;
    }

    private static byte[] pattern(int seed, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 31 + seed * 101);
        }
        return bytes;
    }
}
