package org.rdmaconnector.verbs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/** What the host and device tests observe the same way: a condition coming true, the process's open fds. */
public final class TestProbes {
    private TestProbes() {
    }

    /** Waits until {@code condition} holds; fails naming {@code what} after {@code timeout}. */
    public static void await(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout + " waiting for: " + what);
            }
            Thread.sleep(2);
        }
    }

    /** The number of open file descriptors of this process (entries of /proc/self/fd). */
    public static long openFds() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }
}
