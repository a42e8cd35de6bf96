package org.rdmaconnector.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Map;

/**
 * How long this JVM's JIT compilers have worked, so that a benchmark can say how much compiling ran beside its timed
 * part. Under qemu's TCG (the soft-RDMA VM) the compilers take a large share of the two emulated CPUs for tens of
 * seconds; a timed part they still run in measures them, not the code (BENCHMARKS.md, "The JIT in the timed part").
 */
final class JitTime {
    /** Untimed messages or exchanges run between the warm-up's two waits ({@link #warmUp}), at most a tenth of it. */
    static final int SETTLE = 2000;
    /** The longest one wait for idle compilers lasts, in ms. */
    static final long MAX_WAIT_MILLIS = 60_000;

    /** One part of a benchmark's loop: it runs until {@code until} messages or exchanges are done. */
    interface Part {
        void run(int until) throws InterruptedException;
    }

    /** A wait for idle compilers between two parts. */
    interface Pause {
        void await() throws InterruptedException;
    }

    private JitTime() {
    }

    /**
     * Runs a benchmark's warm-up of {@code warmup} in two parts, each followed by {@code pause}: to {@link #SETTLE}
     * before its end, then the rest. The loop is the same method in every part, the timed part included, so the
     * compiled loop never meets a branch first taken at the boundary. Traffic that resumes after a pause takes paths
     * the steady state did not (threads parked, sources armed), whose compiling falls in the second part; the second
     * pause sees it done. Nothing runs for a warm-up of 0.
     */
    static void warmUp(int warmup, Part loop, Pause pause) throws InterruptedException {
        if (warmup > 0) {
            loop.run(warmup - Math.min(SETTLE, warmup / 10));
            pause.await();
            loop.run(warmup);
            pause.await();
        }
    }

    /** {@link #awaitQuiet(long, long)} for at most {@link #MAX_WAIT_MILLIS}; 0 ms for a {@code quietMillis} of 0. */
    static long awaitQuiet(long quietMillis) throws InterruptedException {
        return quietMillis > 0 ? awaitQuiet(quietMillis, MAX_WAIT_MILLIS) : 0;
    }

    /** Milliseconds the compiler threads have spent compiling so far (summed over them), or -1 if not monitored. */
    static long millis() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
    }

    /**
     * Waits until the compilers have been idle for {@code quietMillis}, at most {@code maxMillis}; returns how long
     * it waited, in ms. Idle: no compilation ended and none of their threads used more than 1 % of a CPU (their CPU
     * time, {@link ThreadSchedule#compilerCpuNanos()}, where /proc says it), looked at every quarter of
     * {@code quietMillis}. A benchmark calls it between its warm-up and its timed
     * part, with no traffic: under TCG the compilers lag the warm-up by seconds, and a compile queue still draining
     * in the timed part takes the pinned vCPU from the code measured (BENCHMARKS.md, "Which threads run per
     * message").
     */
    static long awaitQuiet(long quietMillis, long maxMillis) throws InterruptedException {
        long start = System.nanoTime();
        long step = Math.max(1, quietMillis / 4);
        Map<Path, Long> lastCpu = ThreadSchedule.compilerCpuNanos();
        long lastTime = millis();
        long quietSince = start;
        while (System.nanoTime() - quietSince < quietMillis * 1_000_000L
            && System.nanoTime() - start < maxMillis * 1_000_000L) {
            Thread.sleep(step);
            Map<Path, Long> cpu = ThreadSchedule.compilerCpuNanos();
            long time = millis();
            boolean busy = time != lastTime;
            for (Map.Entry<Path, Long> thread : cpu.entrySet()) {
                // a compiler thread new since the last look counts as busy: the JVM adds them for a long queue
                busy |= thread.getValue() - lastCpu.getOrDefault(thread.getKey(), 0L) > step * 10_000L;
            }
            if (busy) {
                quietSince = System.nanoTime();
            }
            lastCpu = cpu;
            lastTime = time;
        }
        return (System.nanoTime() - start) / 1_000_000L;
    }

    /** The compile time since {@code before} (a {@link #millis()}), or -1 if not monitored. */
    static long since(long before) {
        return between(before, millis());
    }

    /** The ms the compilers worked from {@code before} to {@code after} ({@link #millis()} each), or -1. */
    static long between(long before, long after) {
        return before < 0 || after < 0 ? -1 : after - before;
    }
}
