package org.rdmaconnector.verbs.jna;

import com.sun.jna.Memory;

/**
 * A small block of native memory per thread for out-parameters ({@code struct rdma_cm_event **},
 * {@code struct ibv_cq **}, ...), so hot calls allocate nothing. One call at a time per thread uses it.
 */
public final class Scratch {
    static {
        JnaSetup.prepare(); // before JNA's classes initialize
    }

    /** Bytes available at {@link #address()}. */
    public static final int SIZE = 64;
    private static final ThreadLocal<Memory> BLOCK = ThreadLocal.withInitial(() -> new Memory(SIZE));

    private Scratch() {
    }

    /** This thread's block. */
    public static long address() {
        return Mem.address(BLOCK.get());
    }
}
