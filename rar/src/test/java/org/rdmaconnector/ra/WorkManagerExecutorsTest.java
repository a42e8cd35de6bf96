package org.rdmaconnector.ra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The bootstrap context's timer as the shared machinery's scheduler, for any Duration it may be given. */
class WorkManagerExecutorsTest {
    @Test
    void delaysBecomeTimerMillisecondsFromOneToAThousandYears() {
        long thousandYears = Duration.ofDays(365L * 1000).toMillis();
        assertEquals(1, WorkManagerExecutors.timerDelayMillis(Duration.ZERO));
        assertEquals(1, WorkManagerExecutors.timerDelayMillis(Duration.ofSeconds(Long.MIN_VALUE)));
        assertEquals(1500, WorkManagerExecutors.timerDelayMillis(Duration.ofMillis(1500)));
        assertEquals(thousandYears, WorkManagerExecutors.timerDelayMillis(Duration.ofSeconds(Long.MAX_VALUE)));
        assertEquals(thousandYears, WorkManagerExecutors.timerDelayMillis(Duration.ofMillis(Long.MAX_VALUE)));
    }

    @Test
    void aHugeDelayIsScheduledAndCancelledAndTheTimerStillRunsOtherTasks() throws Exception {
        WorkManagerExecutors executors = new WorkManagerExecutors(new FakeContainer());
        try {
            Runnable cancel = executors.scheduler().schedule(() -> { }, Duration.ofSeconds(Long.MAX_VALUE));
            cancel.run();
            CountDownLatch ran = new CountDownLatch(1);
            executors.scheduler().schedule(ran::countDown, Duration.ofMillis(1));
            assertTrue(ran.await(10, TimeUnit.SECONDS), "the timer runs a task after a huge delay was scheduled");
        } finally {
            executors.close();
        }
    }
}
