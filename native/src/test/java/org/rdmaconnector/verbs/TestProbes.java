package org.rdmaconnector.verbs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
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
     * The open file descriptors of this process by number, each with what it points at (the /proc/self/fd link's
     * target), except the listing's own fd. Give it to {@link #fdsOpenedSince(Map)} later.
     */
    public static Map<Integer, String> openFdTargets() throws IOException {
        Map<Integer, String> fds = new TreeMap<>();
        try (Stream<Path> entries = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : entries.toList()) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (!target.equals(LISTING)) {
                        fds.put(Integer.valueOf(fd.getFileName().toString()), target);
                    }
                } catch (IOException closedMeanwhile) {
                    // closed between the listing and the read
                }
            }
        }
        return fds;
    }

    /**
     * The file descriptors opened since {@code before} ({@link #openFdTargets()}) and still open: a number that was not
     * open then, or now points at something else. Unlike a count, it is not moved by a cleaner closing what an earlier
     * test dropped. Left out: jars (the JVM opens one as it first loads a class from it) and libffi's one file of
     * executable memory (JNA's first native call makes it; it lives as long as the process).
     */
    public static Map<Integer, String> fdsOpenedSince(Map<Integer, String> before) throws IOException {
        Map<Integer, String> now = openFdTargets();
        now.entrySet().removeAll(before.entrySet());
        now.values().removeIf(target -> target.endsWith(".jar") || LIBFFI.matcher(target).matches());
        return now;
    }

    private static final String LISTING = "/proc/" + ProcessHandle.current().pid() + "/fd";
    private static final Pattern LIBFFI = Pattern.compile(".*/ffi\\w{6} \\(deleted\\)");

    /**
     * The open epoll fds, eventfds and pipes of this process (/proc/self/fd entries whose target is
     * {@code anon_inode:[eventpoll]}, {@code anon_inode:[eventfd]} or {@code pipe:[...]}): what an event engine and
     * the host tests' sources open. Unlike {@link #openFds()} it is not moved by the JVM opening a jar to load a class
     * or a cleaner closing a stream some earlier test dropped, so a host test can compare it before and after.
     */
    public static long openEngineFds() throws IOException {
        return openFdTargets().values().stream().filter(target -> target.equals("anon_inode:[eventpoll]")
            || target.equals("anon_inode:[eventfd]") || target.startsWith("pipe:[")).count();
    }
}
