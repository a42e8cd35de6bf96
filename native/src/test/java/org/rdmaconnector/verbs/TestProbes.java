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

    /**
     * The open epoll fds, eventfds and pipes of this process (/proc/self/fd entries whose target is
     * {@code anon_inode:[eventpoll]}, {@code anon_inode:[eventfd]} or {@code pipe:[...]}): what an event engine and
     * the host tests' sources open. Unlike {@link #openFds()} it is not moved by the JVM opening a jar to load a class
     * or a cleaner closing a stream some earlier test dropped, so a host test can compare it before and after.
     */
    public static long openEngineFds() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    return target.equals("anon_inode:[eventpoll]") || target.equals("anon_inode:[eventfd]")
                        || target.startsWith("pipe:[");
                } catch (IOException closedMeanwhile) {
                    return false; // closed between the listing and the read (e.g. the listing's own fd)
                }
            }).count();
        }
    }
}
