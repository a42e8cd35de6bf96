package org.rdmaconnector.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the scheduler did with each of this JVM's threads, read from Linux's {@code /proc/self/task}: CPU time, time
 * spent runnable but waiting for a CPU ({@code schedstat}'s run delay), times scheduled in, and voluntary (blocked)
 * and involuntary (preempted) context switches. A snapshot at each end of a timed part shows, per message, which
 * threads ran and how often: the hand-offs of a round trip, and the waits for a shared CPU that make a stall tail
 * (BENCHMARKS.md, "Which threads run per message"). Where {@code /proc} has no such files, {@link #take()} is empty
 * and {@link #print} says so.
 */
final class ThreadSchedule {
    private static final Path TASKS = Path.of("/proc/self/task");

    /** One thread's counters: cpu ns, run-delay ns, timeslices, voluntary and involuntary switches. */
    private record Counters(String name, long cpu, long delay, long slices, long voluntary, long involuntary) {
    }

    private final Map<String, Counters> byTid;
    // the whole system's (other processes and kernel threads): names kept as they are, each task on its own line
    private final boolean system;

    private ThreadSchedule(Map<String, Counters> byTid, boolean system) {
        this.byTid = byTid;
        this.system = system;
    }

    /** Reads one thread's files under {@code /proc/self/task/TID} (or another process's {@code /proc/PID/task/TID}). */
    private interface TaskReader {
        void read(Path task) throws IOException;
    }

    /** Reads each live thread; one that ended while read, or a kernel without the file, leaves that thread out. */
    private static void eachTask(TaskReader reader) {
        eachTask(TASKS, reader);
    }

    /** Reads each thread listed in {@code dir}, a {@code task} directory of {@code /proc}. */
    private static void eachTask(Path dir, TaskReader reader) {
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(dir)) {
            for (Path task : tasks) {
                try {
                    reader.read(task);
                } catch (IOException | RuntimeException e) {
                    // the thread ended while read, or this kernel has no schedstat: leave it out
                }
            }
        } catch (IOException e) {
            // no /proc/self/task: not Linux
        }
    }

    /** The counters of every live thread now (empty where /proc has no schedstat). */
    static ThreadSchedule take() {
        Map<String, Counters> byTid = new HashMap<>();
        eachTask(task -> readTask(task, byTid));
        return new ThreadSchedule(byTid, false);
    }

    /**
     * The counters of every other process's threads now, kernel threads included (softirq and the RDMA driver's
     * work run in those): who else held a CPU in a timed part.
     */
    static ThreadSchedule takeSystem() {
        Map<String, Counters> byTid = new HashMap<>();
        String self = Long.toString(ProcessHandle.current().pid());
        try (DirectoryStream<Path> pids = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path pid : pids) {
                if (!pid.getFileName().toString().equals(self)) {
                    eachTask(pid.resolve("task"), task -> readTask(task, byTid));
                }
            }
        } catch (IOException e) {
            // no /proc: not Linux
        }
        return new ThreadSchedule(byTid, true);
    }

    private static void readTask(Path task, Map<String, Counters> byTid) throws IOException {
        String[] sched = Files.readString(task.resolve("schedstat")).trim().split(" ");
        long voluntary = 0;
        long involuntary = 0;
        for (String line : Files.readAllLines(task.resolve("status"))) {
            if (line.startsWith("voluntary_ctxt_switches:")) {
                voluntary = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                involuntary = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        String name = Files.readString(task.resolve("comm")).trim();
        byTid.put(task.getFileName().toString(), new Counters(name, Long.parseLong(sched[0]),
            Long.parseLong(sched[1]), Long.parseLong(sched[2]), voluntary, involuntary));
    }

    /**
     * CPU time each of the JIT's compiler threads has used so far, in ns, by its {@code /proc} directory (empty where
     * /proc has no schedstat). Unlike the compile time a {@code CompilationMXBean} reports, which grows when a
     * compilation ends, this grows while one runs: a compilation of seconds under TCG shows as it goes. It reads the
     * threads' names and the compiler threads' {@code schedstat} alone: {@link #take()} every quarter second read
     * enough to make the JIT compile the reading, which kept the compilers busy while a benchmark waited for them.
     */
    static Map<Path, Long> compilerCpuNanos() {
        Map<Path, Long> byThread = new HashMap<>();
        eachTask(task -> {
            String name = Files.readString(task.resolve("comm"));
            if (name.startsWith("C1 Compiler") || name.startsWith("C2 Compiler")) {
                String sched = Files.readString(task.resolve("schedstat"));
                byThread.put(task, Long.parseLong(sched.substring(0, sched.indexOf(' '))));
            }
        });
        return byThread;
    }

    /** A thread's (or registration's) name with its digits as N: the threads of one pool under one name. */
    static String poolName(String name) {
        return name.replaceAll("[0-9]+", "N");
    }

    /**
     * Prints, for each thread (threads of one pool summed under one name, {@link #poolName}) that ran between
     * {@code start} and this snapshot, its figures per message, busiest first.
     */
    void print(String side, ThreadSchedule start, int messages) {
        if (byTid.isEmpty()) {
            System.out.println(side + " threads: no /proc/self/task/*/schedstat here");
            return;
        }
        Map<String, long[]> byName = new TreeMap<>();
        byTid.forEach((tid, now) -> {
            Counters before = start.byTid.getOrDefault(tid, new Counters(now.name, 0, 0, 0, 0, 0));
            if (now.slices > before.slices) {
                String name = system ? now.name + " (" + tid + ")" : poolName(now.name);
                long[] sum = byName.computeIfAbsent(name, k -> new long[5]);
                sum[0] += now.cpu - before.cpu;
                sum[1] += now.delay - before.delay;
                sum[2] += now.slices - before.slices;
                sum[3] += now.voluntary - before.voluntary;
                sum[4] += now.involuntary - before.involuntary;
            }
        });
        System.out.printf("%s threads over %d messages, per message: cpu us, runnable-but-waiting us, times "
            + "scheduled, blocked (voluntary) and preempted (involuntary) switches%n", side, messages);
        byName.entrySet().stream().sorted((x, y) -> system ? Long.compare(y.getValue()[0], x.getValue()[0])
                : Long.compare(y.getValue()[2], x.getValue()[2]))
            .limit(system ? 15 : Long.MAX_VALUE)
            .forEach(e -> {
                long[] s = e.getValue();
                System.out.printf("  %-16s cpu %8.1f  wait %8.1f  runs %6.3f  blocked %6.3f  preempted %6.3f%n",
                    e.getKey(), s[0] / 1e3 / messages, s[1] / 1e3 / messages, (double) s[2] / messages,
                    (double) s[3] / messages, (double) s[4] / messages);
            });
    }
}
