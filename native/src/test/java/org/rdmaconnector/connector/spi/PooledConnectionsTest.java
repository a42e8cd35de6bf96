package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pooled factory's eviction timer, without a device (no set is opened). */
class PooledConnectionsTest {
    @Test
    void aHugeIdleTimeoutSchedulesEvictionWithinWhatASchedulerTakesInMilliseconds() {
        List<Duration> delays = new ArrayList<>();
        Scheduler scheduler = (task, delay) -> {
            delays.add(delay);
            Math.max(1, delay.toMillis()); // what the OSGi and JCA schedulers do with it
            return () -> { };
        };
        try (PooledConnections factory = new PooledConnections(ChannelSettings.DEFAULTS,
            new Pool.Settings(0, 1, Duration.ofSeconds(Long.MAX_VALUE), Duration.ofMillis(Long.MAX_VALUE)), null,
            null, scheduler)) {
            assertEquals(1, delays.size());
            assertTrue(delays.get(0).compareTo(Duration.ofHours(1)) <= 0, delays.get(0).toString());
            assertEquals(0, factory.counters().opened());
        }
    }

    @Test
    void anOrdinaryIdleTimeoutIsCheckedTwicePerTimeout() {
        List<Duration> delays = new ArrayList<>();
        try (PooledConnections factory = new PooledConnections(ChannelSettings.DEFAULTS,
            new Pool.Settings(0, 1, Duration.ofMinutes(5), Duration.ofSeconds(5)), null, null, (task, delay) -> {
                delays.add(delay);
                return () -> { };
            })) {
            assertEquals(List.of(Duration.ofSeconds(150)), delays);
        }
    }
}
