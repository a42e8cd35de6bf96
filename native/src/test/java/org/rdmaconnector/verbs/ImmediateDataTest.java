package org.rdmaconnector.verbs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/**
 * imm_data is a __be32 in ibv_send_wr and ibv_wc: what QueuePair writes (and WorkCompletions reads) through native-order
 * memory must be the value's bytes in network order, so that a peer in C (or on a machine of the other byte order)
 * reads the same number. Both ends of a Java-to-Java test would agree on any conversion; this checks the bytes.
 */
class ImmediateDataTest {
    @Test
    void theImmediateDataLandsInMemoryInNetworkByteOrder() {
        ByteBuffer field = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder()); // as Mem.putInt writes it
        field.putInt(0, QueuePair.toNetworkOrder(0x01020304));
        byte[] bytes = new byte[4];
        field.get(0, bytes);
        assertArrayEquals(new byte[] {1, 2, 3, 4}, bytes);
        assertEquals(0xCAFEBABE, QueuePair.toNetworkOrder(QueuePair.toNetworkOrder(0xCAFEBABE)), "its own inverse");
    }
}
