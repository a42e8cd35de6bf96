package org.rdmaconnector.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RnrTimerTest {
    @Test
    void codeZeroIsTheLongestAndTheOthersGrowWithTheCode() {
        assertEquals(655_360, new RnrTimer(0).micros());
        assertEquals(10, new RnrTimer(1).micros());
        assertEquals(491_520, new RnrTimer(31).micros());
        for (int code = 2; code <= 31; code++) {
            assertTrue(new RnrTimer(code).micros() > new RnrTimer(code - 1).micros(), "code " + code);
            assertTrue(new RnrTimer(code).micros() < new RnrTimer(0).micros(), "code " + code);
        }
    }

    @Test
    void aDelayIsRoundedUpToTheShortestTimerThatIsAtLeastAsLong() {
        assertEquals(new RnrTimer(12), RnrTimer.atLeastMicros(640), "rc_pingpong's 0.64 ms");
        assertEquals(new RnrTimer(13), RnrTimer.atLeastMicros(641));
        assertEquals(new RnrTimer(1), RnrTimer.atLeastMicros(10));
        assertEquals(new RnrTimer(31), RnrTimer.atLeastMicros(491_520));
        assertEquals(new RnrTimer(0), RnrTimer.atLeastMicros(491_521), "only code 0 is longer than 491.52 ms");
        assertEquals(RnrTimer.CM_DEFAULT, RnrTimer.atLeastMicros(655_360));
    }

    @Test
    void outOfRangeValuesAreRefusedWithTheRange() {
        assertEquals("an RNR timer is from 10 to 655360 microseconds, was 9",
            assertThrows(IllegalArgumentException.class, () -> RnrTimer.atLeastMicros(9)).getMessage());
        assertEquals("an RNR timer is from 10 to 655360 microseconds, was 655361",
            assertThrows(IllegalArgumentException.class, () -> RnrTimer.atLeastMicros(655_361)).getMessage());
        assertEquals("an RNR timer code is from 0 to 31, was 32",
            assertThrows(IllegalArgumentException.class, () -> new RnrTimer(32)).getMessage());
    }

    @Test
    void itReadsAsMillisecondsAndCode() {
        assertEquals("0.64 ms (code 12)", new RnrTimer(12).toString());
        assertEquals("655.36 ms (code 0)", RnrTimer.CM_DEFAULT.toString());
    }
}
