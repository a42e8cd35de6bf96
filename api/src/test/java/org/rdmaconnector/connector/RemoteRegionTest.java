package org.rdmaconnector.connector;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RemoteRegionTest {
    private static final RemoteRegion REGION = new RemoteRegion(0x7f12_3456_789aL, 65536, 0x00c0ffee,
        EnumSet.of(RemoteAccess.READ, RemoteAccess.WRITE));

    @Test
    void itIsEncodedInEighteenBytesOfNetworkOrderAndDecodedAsItWas() {
        byte[] bytes = REGION.toBytes();
        assertEquals(RemoteRegion.ENCODED_LENGTH, bytes.length);
        assertArrayEquals(new byte[] {1, 3, 0, 0, 0x7f, 0x12, 0x34, 0x56, 0x78, (byte) 0x9a, 0, 1, 0, 0, 0,
            (byte) 0xc0, (byte) 0xff, (byte) 0xee}, bytes, "format, access bits, address, length, rkey, big-endian");
        assertEquals(REGION, RemoteRegion.fromBytes(bytes));
        for (Set<RemoteAccess> access : java.util.List.<Set<RemoteAccess>>of(Set.of(), Set.of(RemoteAccess.READ),
            Set.of(RemoteAccess.WRITE))) {
            RemoteRegion region = new RemoteRegion(-1L, 0, -1, access);
            assertEquals(region, RemoteRegion.fromBytes(region.toBytes()), access.toString());
        }
    }

    @Test
    void itFitsInsideALargerMessage() {
        ByteBuffer message = ByteBuffer.allocate(4 + RemoteRegion.ENCODED_LENGTH + 2);
        message.putInt(42);
        REGION.writeTo(message);
        message.putShort((short) 7);
        message.flip();
        assertEquals(42, message.getInt());
        assertEquals(REGION, RemoteRegion.readFrom(message));
        assertEquals(7, message.getShort(), "the position moved past the region");
        assertFalse(message.hasRemaining());
    }

    @Test
    void badBytesAreRefusedWithTheReasonAndTheBufferUntouched() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RemoteRegion.fromBytes(new byte[17]))
            .getMessage().contains("takes 18 bytes, 17 remain"));
        assertThrows(IllegalArgumentException.class, () -> RemoteRegion.fromBytes(null));
        byte[] wrongFormat = REGION.toBytes();
        wrongFormat[0] = 2;
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RemoteRegion.fromBytes(wrongFormat))
            .getMessage().contains("format byte 2"));
        byte[] unknownAccess = REGION.toBytes();
        unknownAccess[1] = 4;
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RemoteRegion.fromBytes(unknownAccess))
            .getMessage().contains("access bits 4"));
        byte[] negativeLength = REGION.toBytes();
        negativeLength[10] = (byte) 0x80;
        ByteBuffer source = ByteBuffer.wrap(negativeLength);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RemoteRegion.readFrom(source))
            .getMessage().contains("length -"));
        assertEquals(0, source.position(), "a refused region leaves the position where it was");
    }

    @Test
    void itsArgumentsAreChecked() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new RemoteRegion(0, -1, 0, Set.of()))
            .getMessage().contains("length must be at least 0, was -1"));
        assertThrows(IllegalArgumentException.class, () -> new RemoteRegion(0, 1, 0, null));
    }

    @Test
    void itsAccessIsACopyThatCannotChange() {
        Set<RemoteAccess> access = new HashSet<>(Set.of(RemoteAccess.READ));
        RemoteRegion region = new RemoteRegion(0, 1, 0, access);
        access.add(RemoteAccess.WRITE);
        assertTrue(region.allows(RemoteAccess.READ));
        assertFalse(region.allows(RemoteAccess.WRITE));
        assertThrows(UnsupportedOperationException.class, () -> region.access().add(RemoteAccess.WRITE));
        assertEquals("RemoteRegion[address 0x7f123456789a, 65536 bytes, rkey 0xc0ffee, remote [READ, WRITE]]",
            REGION.toString());
    }
}
