package org.rdmaconnector.example;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What one client run measured: round-trip times (send to echo received) in nanoseconds, and the wall time.
 *
 * @param messages messages sent
 * @param size bytes per message
 * @param echoedIntact echoes whose bytes equal what was sent
 * @param completedWithoutWaiting echoes already complete at the first non-blocking check
 * @param roundTripsNanos one entry per message
 * @param wallNanos the whole run, first send to last echo
 */
public record LatencyReport(int messages, int size, int echoedIntact, int completedWithoutWaiting,
                            long[] roundTripsNanos, long wallNanos) {
    /** The {@code p}-th percentile (0-100) of the round trips, in microseconds (nearest rank). */
    public double percentileMicros(double p) {
        long[] sorted = roundTripsNanos.clone();
        Arrays.sort(sorted);
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(p / 100 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1000.0;
    }

    /** Messages per second over the wall time. */
    public double messagesPerSecond() {
        return wallNanos == 0 ? 0 : messages * 1e9 / wallNanos;
    }

    /** The report as lines: {@code key value} facts, then the latency table. */
    public List<String> lines() {
        return List.of(
            "messages " + messages,
            "size " + size,
            "echoed-intact " + echoedIntact,
            "completed-without-waiting " + completedWithoutWaiting,
            String.format(Locale.ROOT, "messages-per-second %.1f", messagesPerSecond()),
            String.format(Locale.ROOT, "latency-us p50 %.1f p90 %.1f p99 %.1f max %.1f", percentileMicros(50),
                percentileMicros(90), percentileMicros(99), percentileMicros(100)));
    }
}
