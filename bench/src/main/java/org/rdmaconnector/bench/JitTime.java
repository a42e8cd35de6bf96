package org.rdmaconnector.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * How long this JVM's JIT compilers have worked, so that a benchmark can say how much compiling ran beside its timed
 * part. Under qemu's TCG (the soft-RDMA VM) the compilers take a large share of the two emulated CPUs for tens of
 * seconds; a timed part they still run in measures them, not the code (BENCHMARKS.md, "The JIT in the timed part").
 */
final class JitTime {
    private JitTime() {
    }

    /** Milliseconds the compiler threads have spent compiling so far (summed over them), or -1 if not monitored. */
    static long millis() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
    }

    /** The compile time since {@code before} (a {@link #millis()}), or -1 if not monitored. */
    static long since(long before) {
        long now = millis();
        return before < 0 || now < 0 ? -1 : now - before;
    }
}
