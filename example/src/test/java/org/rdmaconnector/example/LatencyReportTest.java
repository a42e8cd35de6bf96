package org.rdmaconnector.example;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The client's arithmetic: nearest-rank percentiles, rate, the report lines, the message pattern. */
class LatencyReportTest {
    @Test
    void percentilesAreNearestRankInMicroseconds() {
        long[] nanos = new long[100];
        for (int i = 0; i < 100; i++) {
            nanos[i] = (100 - i) * 1000L; // 100 us down to 1 us, unsorted
        }
        LatencyReport report = new LatencyReport(100, 64, 100, 7, nanos, 2_000_000_000L);
        assertEquals(50.0, report.percentileMicros(50));
        assertEquals(90.0, report.percentileMicros(90));
        assertEquals(99.0, report.percentileMicros(99));
        assertEquals(100.0, report.percentileMicros(100));
        assertEquals(50.0, report.messagesPerSecond());
        assertEquals(List.of("messages 100", "size 64", "echoed-intact 100", "completed-without-waiting 7",
            "messages-per-second 50.0", "latency-us p50 50.0 p90 90.0 p99 99.0 max 100.0"), report.lines());
    }

    @Test
    void messagesCarryTheirNumberAndHaveTheAskedSize() {
        assertArrayEquals("echo 3 klmn".getBytes(), EchoClient.message(3, 11));
        assertEquals(4096, EchoClient.message(999, 4096).length);
    }
}
