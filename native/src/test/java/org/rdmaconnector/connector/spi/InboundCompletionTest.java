package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.InboundConnection;
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;

/**
 * A delivered completion reads its bytes in the receive slot during its delivery, as a copy each time or into an
 * array of the listener's own; once it is through, the slot is reused, and it answers from a copy of its own unless
 * the listener took the bytes with copyData.
 */
class InboundCompletionTest {
    private static final byte[] MESSAGE = "hello".getBytes(StandardCharsets.UTF_8);
    private static final WorkRequest RECEIVE = new PostedRequest(1, WorkRequest.Kind.RECEIVE);

    /**
     * A receive slot: it holds the message until it is reused, and counts the reads; and the connection's side of
     * the delivery's end, which keeps what it is told.
     */
    private static final class Slot implements InboundCompletion.Owner {
        final byte[] bytes = MESSAGE.clone();
        int reads;
        final List<String> through = new ArrayList<>();

        @Override
        public void through(InboundCompletion completion, boolean wasHeld) {
            through.add(completion.sequence() + (wasHeld ? " held" : " not held"));
        }

        @Override
        public void read(WorkRequest receive, byte[] destination, int offset, int length) {
            assertEquals(RECEIVE, receive, "the slot of the completion's own receive");
            reads++;
            System.arraycopy(bytes, 0, destination, offset, length);
        }

        /** The receive was posted again, and the next message overwrote the slot. */
        void reused() {
            Arrays.fill(bytes, (byte) 'x');
        }
    }

    private final Slot slot = new Slot();
    // connection 3: all a completion asks of it is its number
    private final InboundConnection connection = (InboundConnection) Proxy.newProxyInstance(
        getClass().getClassLoader(), new Class<?>[] {InboundConnection.class}, (proxy, method, args) -> 3L);

    private InboundCompletion received() {
        WorkCompletion wc = new WorkCompletion(1, 0, WcOpcode.RECV, 0, MESSAGE.length, 0, 7, 0, 0);
        return new InboundCompletion(connection, slot, wc, true, RECEIVE, MESSAGE.length, 1);
    }

    @Test
    void dataIsANewCopyEachTime() {
        InboundCompletion completion = received();
        byte[] first = completion.data();
        first[0] = 'J';
        assertArrayEquals(MESSAGE, completion.data(), "a listener's change to one copy reaches no other");
        assertNotSame(completion.data(), completion.data());
        assertEquals(1, slot.reads, "the slot is read once: the completion keeps that copy");
    }

    @Test
    void copyDataPutsTheBytesAtTheOffsetAndSaysHowMany() {
        InboundCompletion completion = received();
        byte[] into = new byte[8];
        assertEquals(5, completion.dataLength());
        assertEquals(5, completion.copyData(into, 3));
        assertArrayEquals(new byte[] {0, 0, 0, 'h', 'e', 'l', 'l', 'o'}, into);
    }

    @Test
    void copyDataThatDoesNotFitIsRefusedAndWritesNothing() {
        InboundCompletion completion = received();
        byte[] into = new byte[6];
        IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, () -> completion.copyData(into, 2));
        assertTrue(e.getMessage().contains("5 bytes received do not fit at offset 2 of an array of 6 bytes"),
            e.getMessage());
        assertArrayEquals(new byte[6], into);
        assertThrows(IndexOutOfBoundsException.class, () -> completion.copyData(into, -1));
        assertThrows(IllegalArgumentException.class, () -> completion.copyData(null, 0));
        assertEquals(0, slot.reads);
    }

    @Test
    void aSendsCompletionHasNoBytes() {
        WorkCompletion wc = new WorkCompletion(2, 0, WcOpcode.SEND, 0, 0, 0, 7, 0, 0);
        InboundCompletion send = new InboundCompletion(connection, slot, wc, false, null, 0, 1);
        assertEquals(0, send.dataLength());
        assertEquals(0, send.copyData(new byte[0], 0));
        assertEquals(0, send.data().length);
        send.delivered();
        assertEquals(0, slot.reads);
    }

    @Test
    void aCompletionKeepsItsBytesWhenItsDeliveryIsThroughAndTheSlotIsReused() {
        InboundCompletion completion = received();
        completion.delivered();
        slot.reused();
        assertArrayEquals(MESSAGE, completion.data());
        byte[] into = new byte[5];
        completion.copyData(into, 0);
        assertArrayEquals(MESSAGE, into);
        completion.delivered();
        assertEquals(1, slot.reads, "copied out once, when through");
    }

    @Test
    void dataReadDuringTheDeliveryIsTheCopyKept() {
        InboundCompletion completion = received();
        assertArrayEquals(MESSAGE, completion.data());
        completion.delivered();
        slot.reused();
        assertArrayEquals(MESSAGE, completion.data());
        assertEquals(1, slot.reads);
    }

    @Test
    void copyDataDuringTheDeliveryTakesTheBytesAndNothingIsCopiedForTheCompletion() {
        InboundCompletion completion = received();
        byte[] own = new byte[5];
        completion.copyData(own, 0);
        completion.copyData(own, 0); // as often as it likes, during the delivery
        completion.delivered();
        slot.reused();
        assertArrayEquals(MESSAGE, own);
        assertEquals(2, slot.reads, "only the listener's reads: no copy was made when through");
        IllegalStateException e = assertThrows(IllegalStateException.class, completion::data);
        assertTrue(e.getMessage().startsWith("the 5 bytes of receive 1 of connection 3 (RECV, success, 5 bytes) were "
            + "taken with copyData during its delivery"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> completion.copyData(own, 0));
        assertEquals(5, completion.dataLength(), "its length is still known");
    }

    @Test
    void itIsItsDeliverysDoneWhichEndsOnceAndSaysWhetherItWasCountedAsHeld() {
        InboundCompletion held = received();
        assertTrue(held.returned(), "its delivery call returned before it was through: held");
        assertTrue(held.counted());
        held.run();
        held.run();
        InboundCompletion throughFirst = received();
        throughFirst.run();
        assertFalse(throughFirst.returned(), "through before its delivery call returned: never held");
        throughFirst.run();
        InboundCompletion endedWhileCounted = received();
        assertTrue(endedWhileCounted.returned());
        endedWhileCounted.run(); // a resumed endpoint, before its owner said it counted it
        assertFalse(endedWhileCounted.counted(), "its end did not count it off: the owner takes its count back");
        assertEquals(List.of("1 held", "1 not held", "1 not held"), slot.through, "each ends once");
        Object given = held; // what a listener is given
        assertFalse(given instanceof Runnable, "a listener cannot end its delivery");
    }
}
