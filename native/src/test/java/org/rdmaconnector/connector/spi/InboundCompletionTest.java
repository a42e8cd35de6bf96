package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
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
import org.rdmaconnector.verbs.PolledCompletion;

/**
 * A delivered completion is a view of its request, valid during its delivery: it reads its bytes in the receive slot
 * and its work completion in the request, both reused once the delivery is through; from then on, and for a read that
 * races the delivery's end, it throws instead of answering from a later message.
 */
class InboundCompletionTest {
    private static final byte[] MESSAGE = "hello".getBytes(StandardCharsets.UTF_8);

    /**
     * A receive slot: it holds the message until it is reused, and counts the reads; and the connection's side of
     * the delivery's end, which keeps what it is told.
     */
    private static final class Slot implements InboundCompletion.Owner {
        final byte[] bytes = MESSAGE.clone();
        int reads;
        Runnable onRead = () -> { };
        final List<String> through = new ArrayList<>();
        // connection 3: all a completion asks of it is its number
        final InboundConnection connection = (InboundConnection) Proxy.newProxyInstance(
            getClass().getClassLoader(), new Class<?>[] {InboundConnection.class}, (proxy, method, args) -> 3L);

        @Override
        public InboundConnection connection() {
            return connection;
        }

        @Override
        public void through(InboundCompletion completion, boolean wasHeld) {
            through.add((completion.message() != null ? "message" : "no message") + (wasHeld ? " held" : " not held"));
        }

        @Override
        public void read(WorkRequest receive, byte[] destination, int offset, int length) {
            assertTrue(receive instanceof PostedRequest p && p.kind() == WorkRequest.Kind.RECEIVE, "a receive's slot");
            reads++;
            System.arraycopy(bytes, 0, destination, offset, length);
            onRead.run();
        }

        /** The receive was posted again, and the next message overwrote the slot. */
        void reused() {
            Arrays.fill(bytes, (byte) 'x');
        }
    }

    private final Slot slot = new Slot();

    private InboundCompletion completed(WorkCompletion wc, WorkRequest.Kind kind) {
        PostedRequest request = new PostedRequest(wc.wrId(), kind);
        assertTrue(request.complete(PolledCompletion.of(wc), null));
        return new InboundCompletion(slot, request, 1);
    }

    private InboundCompletion received() {
        return completed(new WorkCompletion(1, 0, WcOpcode.RECV, 0, MESSAGE.length, 0, 7, 0, 0),
            WorkRequest.Kind.RECEIVE);
    }

    @Test
    void dataIsANewCopyEachTime() {
        InboundCompletion completion = received();
        byte[] first = completion.data();
        first[0] = 'J';
        assertArrayEquals(MESSAGE, completion.data(), "a listener's change to one copy reaches no other");
        assertNotSame(completion.data(), completion.data());
        assertEquals(4, slot.reads, "each copy read from the slot: the completion keeps none");
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
    void aSendsCompletionHasNoBytesAndNoMessage() {
        InboundCompletion send = completed(new WorkCompletion(2, 0, WcOpcode.SEND, 0, 0, 0, 7, 0, 0),
            WorkRequest.Kind.SEND);
        assertFalse(send.isReceive());
        assertTrue(send.isSuccess());
        assertEquals(0, send.dataLength());
        assertEquals(0, send.copyData(new byte[0], 0));
        assertEquals(0, send.data().length);
        assertEquals(null, send.message(), "no receive to post again");
        assertEquals(0, slot.reads);
    }

    @Test
    void theWorkCompletionIsMadeFromTheRequestWhenAskedAndKept() {
        WorkCompletion wc = new WorkCompletion(9, 0, WcOpcode.RECV_RDMA_WITH_IMM, 0, 4096, 77, 7, 0,
            WorkCompletion.WITH_IMM);
        InboundCompletion immediate = completed(wc, WorkRequest.Kind.RECEIVE);
        assertEquals(wc, immediate.workCompletion());
        assertSame(immediate.workCompletion(), immediate.workCompletion());
        assertEquals(0, immediate.dataLength(), "the peer's WRITE put its bytes in the region written, not the slot");
        assertEquals(1, immediate.sequence());
        assertEquals(3L, immediate.connection().number());
        assertTrue(immediate.message() != null, "its receive is posted again once through");
        assertTrue(immediate.toString().contains("immediate 77"), immediate.toString());
    }

    @Test
    void everyMethodThrowsOnceTheDeliveryIsThrough() {
        InboundCompletion completion = received();
        completion.run();
        slot.reused();
        List<Runnable> calls = List.of(completion::connection, completion::workCompletion, completion::isReceive,
            completion::isSuccess, completion::sequence, completion::data, completion::dataLength,
            () -> completion.copyData(new byte[5], 0));
        for (Runnable call : calls) {
            IllegalStateException e = assertThrows(IllegalStateException.class, call::run);
            assertEquals("receive 1 of connection 3 was delivered already: a MessageCompletion is valid during its "
                + "delivery only (take what you keep with data(), copyData or workCompletion() before it ends)",
                e.getMessage());
        }
        assertEquals(0, slot.reads, "nothing read from the reused slot");
        assertEquals("receive 1 of connection 3", completion.toString(), "it still names itself");
    }

    @Test
    void aReadThatRacesTheDeliverysEndThrowsRatherThanAnswerFromALaterMessage() {
        InboundCompletion completion = received();
        slot.onRead = () -> {
            completion.run(); // another endpoint was the last, and the receive was posted again meanwhile
            slot.reused();
        };
        assertThrows(IllegalStateException.class, completion::data);
        assertThrows(IllegalStateException.class, () -> completion.copyData(new byte[5], 0));
        InboundCompletion shorter = received();
        slot.onRead = () -> {
            shorter.run(); // and the slot was lent again, to a shorter message, which the wire refuses to overread
            throw new IndexOutOfBoundsException("5 bytes asked of a message of 2");
        };
        IllegalStateException e = assertThrows(IllegalStateException.class, shorter::data);
        assertTrue(e.getMessage().contains("was delivered already"), e.getMessage());
    }

    @Test
    void itIsItsDeliverysDoneWhichEndsOnceAndSaysWhetherItWasCountedAsHeld() {
        InboundCompletion held = received();
        assertTrue(held.returned(), "its delivery call returned before it was through: held");
        assertTrue(held.counted());
        assertArrayEquals(MESSAGE, held.data(), "valid while held");
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
        assertEquals(List.of("message held", "message not held", "message not held"), slot.through, "each ends once");
        Object given = held; // what a listener is given
        assertFalse(given instanceof Runnable, "a listener cannot end its delivery");
    }
}
