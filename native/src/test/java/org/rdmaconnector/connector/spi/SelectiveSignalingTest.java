package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SelectiveSignalingTest {
    @Test
    void aSignaledCompletionCoversTheUnsignaledRequestsPostedBeforeIt() {
        SelectiveSignaling signaling = new SelectiveSignaling(16);
        post(signaling, 1, false);
        post(signaling, 2, false);
        post(signaling, 3, true);
        post(signaling, 4, false);
        post(signaling, 5, true);
        assertArrayEquals(new long[] {1, 2}, coveredBy(signaling, 3));
        assertEquals(1, signaling.uncovered(), "4 waits for 5");
        assertArrayEquals(new long[] {4}, coveredBy(signaling, 5));
        assertArrayEquals(new long[0], coveredBy(signaling, 6), "nothing left");
        assertEquals(0, signaling.uncovered());
    }

    @Test
    void aCompletionCoversNothingPostedAfterIt() {
        SelectiveSignaling signaling = new SelectiveSignaling(16);
        post(signaling, 10, true);
        post(signaling, 11, false);
        assertArrayEquals(new long[0], coveredBy(signaling, 10));
        assertEquals(1, signaling.uncovered());
    }

    @Test
    void aRequestThatCompletedAloneIsNotCovered() {
        SelectiveSignaling signaling = new SelectiveSignaling(16);
        post(signaling, 1, false);
        post(signaling, 2, false);
        post(signaling, 3, true);
        signaling.completedAlone(2); // failed: its own completion
        assertEquals(1, signaling.uncovered());
        assertArrayEquals(new long[] {1}, coveredBy(signaling, 3));
    }

    @Test
    void atMostDepthLessOneRequestsInARowGoUnsignaled() {
        SelectiveSignaling signaling = new SelectiveSignaling(4);
        for (long wrId = 1; wrId <= 3; wrId++) {
            assertFalse(signaling.signals(false), "request " + wrId);
            signaling.posted(wrId, false);
        }
        assertTrue(signaling.signals(false), "the fourth in a row is signaled, or a full send queue never frees");
        signaling.posted(4, true);
        assertFalse(signaling.signals(false), "a signaled request starts the count again");
        assertTrue(signaling.signals(true), "asked for");
        assertArrayEquals(new long[] {1, 2, 3}, coveredBy(signaling, 4));
    }

    @Test
    void aSignaledPostThatFailedDoesNotCountAsTheOneThatFreesTheSendQueue() {
        SelectiveSignaling signaling = new SelectiveSignaling(4);
        for (long wrId = 1; wrId <= 3; wrId++) {
            signaling.posted(wrId, false);
        }
        assertTrue(signaling.signals(false));
        int before = signaling.posted(4, true);
        signaling.unposted(4, before); // ibv_post_send failed: the send queue is full
        assertTrue(signaling.signals(false), "the retry is signaled still, or the queue fills with unsignaled ones");
        int unsignaled = signaling.posted(5, false);
        signaling.unposted(5, unsignaled);
        assertEquals(3, signaling.uncovered(), "a failed post is not waiting to be covered");
        assertArrayEquals(new long[] {1, 2, 3}, coveredBy(signaling, 6));
    }

    @Test
    void aSendQueueOfOneSignalsEveryRequest() {
        SelectiveSignaling signaling = new SelectiveSignaling(1);
        assertTrue(signaling.signals(false));
        assertThrows(IllegalArgumentException.class, () -> new SelectiveSignaling(0));
    }

    @Test
    void manyInFlightKeepTheirOrderAsTheRingGrowsWrapsAndLosesOneInTheMiddle() {
        SelectiveSignaling signaling = new SelectiveSignaling(1000);
        for (long wrId = 1; wrId <= 10; wrId++) {
            signaling.posted(wrId, false);
        }
        assertArrayEquals(new long[] {1, 2, 3, 4, 5, 6, 7, 8}, coveredBy(signaling, 9)); // the ring's head moves on
        for (long wrId = 11; wrId <= 40; wrId++) { // 32 in flight: it wraps, then grows twice
            signaling.posted(wrId, false);
        }
        signaling.completedAlone(25);
        signaling.completedAlone(99); // never posted: nothing changes
        assertEquals(31, signaling.uncovered());
        long[] expected = java.util.stream.LongStream.rangeClosed(9, 40).filter(w -> w != 25).toArray();
        assertArrayEquals(expected, coveredBy(signaling, 41));
        assertEquals(0, signaling.uncovered());
    }

    /** Every request the completion of {@code signaledWrId} covers, oldest first. */
    private static long[] coveredBy(SelectiveSignaling signaling, long signaledWrId) {
        java.util.stream.LongStream.Builder covered = java.util.stream.LongStream.builder();
        for (long wrId = signaling.nextCoveredBy(signaledWrId); wrId >= 0;
             wrId = signaling.nextCoveredBy(signaledWrId)) {
            covered.add(wrId);
        }
        return covered.build().toArray();
    }

    private static void post(SelectiveSignaling signaling, long wrId, boolean signaled) {
        boolean signal = signaling.signals(signaled);
        assertEquals(signaled, signal, "request " + wrId);
        signaling.posted(wrId, signal);
    }
}
