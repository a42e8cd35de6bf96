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
        assertArrayEquals(new long[] {1, 2}, signaling.coveredBy(3));
        assertEquals(1, signaling.uncovered(), "4 waits for 5");
        assertArrayEquals(new long[] {4}, signaling.coveredBy(5));
        assertArrayEquals(new long[0], signaling.coveredBy(6), "nothing left");
        assertEquals(0, signaling.uncovered());
    }

    @Test
    void aCompletionCoversNothingPostedAfterIt() {
        SelectiveSignaling signaling = new SelectiveSignaling(16);
        post(signaling, 10, true);
        post(signaling, 11, false);
        assertArrayEquals(new long[0], signaling.coveredBy(10));
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
        assertArrayEquals(new long[] {1}, signaling.coveredBy(3));
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
        assertArrayEquals(new long[] {1, 2, 3}, signaling.coveredBy(4));
    }

    @Test
    void aSendQueueOfOneSignalsEveryRequest() {
        SelectiveSignaling signaling = new SelectiveSignaling(1);
        assertTrue(signaling.signals(false));
        assertThrows(IllegalArgumentException.class, () -> new SelectiveSignaling(0));
    }

    private static void post(SelectiveSignaling signaling, long wrId, boolean signaled) {
        boolean signal = signaling.signals(signaled);
        assertEquals(signaled, signal, "request " + wrId);
        signaling.posted(wrId, signal);
    }
}
