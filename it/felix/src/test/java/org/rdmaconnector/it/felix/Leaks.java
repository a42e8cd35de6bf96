package org.rdmaconnector.it.felix;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.Set;
import java.util.stream.Stream;

/** What a stopped rdma-osgi must not leave behind: its threads (named rdma-*) and file descriptors. */
final class Leaks {
    private final Set<Thread> threadsBefore = Thread.getAllStackTraces().keySet();
    private final Map<String, String> fdsBefore = openFds();

    /** The rdma-* threads started since this snapshot and alive now. */
    List<String> newRdmaThreads() {
        return Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.isAlive() && t.getName().startsWith("rdma-") && !threadsBefore.contains(t))
            .map(Thread::getName).sorted().toList();
    }

    /**
     * The rdma-* threads started since this snapshot that are still alive after up to 10 s (a pool's worker ends a
     * moment after the pool says it terminated).
     */
    List<String> rdmaThreadsLeft() throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        List<String> left = newRdmaThreads();
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(20);
            left = newRdmaThreads();
        }
        return left;
    }

    /**
     * File descriptors opened since this snapshot and still open, with what they point at. Left out: jars of the
     * class path (the JVM opens them as it first loads classes from them) and libffi's one file of executable memory
     * per process (JNA's first native call creates it; it lives as long as the process).
     */
    Map<String, String> newFds() {
        Map<String, String> now = openFds();
        now.entrySet().removeAll(fdsBefore.entrySet()); // by number AND target: a number may have been reused
        now.values().removeIf(target -> CLASS_PATH.contains(target) || LIBFFI.matcher(target).matches());
        return now;
    }

    private static final java.util.regex.Pattern LIBFFI = java.util.regex.Pattern.compile(".*/ffi\\w{6} \\(deleted\\)");
    private static final List<String> CLASS_PATH =
        List.of(System.getProperty("java.class.path").split(java.io.File.pathSeparator));

    /** What the listing's own fd points at: left out, since its number differs whenever a lower one was taken. */
    private static final String LISTING = "/proc/" + ProcessHandle.current().pid() + "/fd";

    private static Map<String, String> openFds() {
        Map<String, String> fds = new TreeMap<>();
        try (Stream<Path> entries = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : entries.toList()) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (!target.equals(LISTING)) {
                        fds.put(fd.getFileName().toString(), target);
                    }
                } catch (IOException closedMeanwhile) {
                    // one closed while listing
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot list /proc/self/fd", e);
        }
        return fds;
    }
}
