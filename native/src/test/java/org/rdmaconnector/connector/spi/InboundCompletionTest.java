package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WorkCompletion;

/** A delivered completion gives its bytes as a copy each time, or into an array of the listener's own. */
class InboundCompletionTest {
    private static final byte[] MESSAGE = "hello".getBytes(StandardCharsets.UTF_8);

    private static InboundCompletion received(byte[] bytes) {
        return new InboundCompletion(null, new WorkCompletion(1, 0, WcOpcode.RECV, 0, bytes.length, 0, 7, 0, 0), true,
            bytes, 1);
    }

    @Test
    void dataIsANewCopyEachTime() {
        InboundCompletion completion = received(MESSAGE.clone());
        byte[] first = completion.data();
        first[0] = 'J';
        assertArrayEquals(MESSAGE, completion.data(), "a listener's change to one copy reaches no other");
        assertNotSame(completion.data(), completion.data());
    }

    @Test
    void copyDataPutsTheBytesAtTheOffsetAndSaysHowMany() {
        InboundCompletion completion = received(MESSAGE.clone());
        byte[] into = new byte[8];
        assertEquals(5, completion.dataLength());
        assertEquals(5, completion.copyData(into, 3));
        assertArrayEquals(new byte[] {0, 0, 0, 'h', 'e', 'l', 'l', 'o'}, into);
    }

    @Test
    void copyDataThatDoesNotFitIsRefusedAndWritesNothing() {
        InboundCompletion completion = received(MESSAGE.clone());
        byte[] into = new byte[6];
        IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, () -> completion.copyData(into, 2));
        assertTrue(e.getMessage().contains("5 bytes received do not fit at offset 2 of an array of 6 bytes"),
            e.getMessage());
        assertArrayEquals(new byte[6], into);
        assertThrows(IndexOutOfBoundsException.class, () -> completion.copyData(into, -1));
        assertThrows(IllegalArgumentException.class, () -> completion.copyData(null, 0));
    }

    @Test
    void aSendsCompletionHasNoBytes() {
        InboundCompletion send = new InboundCompletion(null, new WorkCompletion(2, 0, WcOpcode.SEND, 0, 0, 0, 7, 0, 0),
            false, null, 1);
        assertEquals(0, send.dataLength());
        assertEquals(0, send.copyData(new byte[0], 0));
        assertEquals(0, send.data().length);
    }
}
