package org.rdmaconnector.connector.spi;

import java.time.Duration;

/** Runs a task later, on the container's timer (a JCA BootstrapContext timer, an OSGi scheduled executor). */
@FunctionalInterface
public interface Scheduler {
    /**
     * Runs {@code task} once after {@code delay}.
     *
     * @return cancels the task if it has not started
     */
    Runnable schedule(Runnable task, Duration delay);
}
