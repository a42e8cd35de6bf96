package org.rdmaconnector.verbs.jna;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.nio.ByteBuffer;

/**
 * A small block of native memory per thread for out-parameters ({@code struct rdma_cm_event **},
 * {@code struct ibv_cq **}, ...), so hot calls allocate nothing. One call at a time per thread uses it.
 *
 * <p>The block is a direct {@link ByteBuffer}, a class of the JDK, not JNA's {@code Memory}: in an application
 * server the threads outlive a deployment, and a thread-local value whose class came from the deployment's class
 * loader (JNA's classes do) would keep that loader, and every class it loaded, from being collected after an
 * undeploy. A buffer is freed by the JDK once its thread ends or the thread-local entry is dropped.
 */
public final class Scratch {
    static {
        JnaSetup.prepare(); // before JNA's classes initialize
    }

    /** Bytes available at {@link #address()}. */
    public static final int SIZE = 64;
    // no lambda (withInitial): an initial value supplier is a class of ours, held by the ThreadLocal itself; the
    // value is {the buffer, its address as a Long}: JDK classes only, and the address is looked up once
    private static final ThreadLocal<Object[]> BLOCK = new ThreadLocal<>();

    private Scratch() {
    }

    /** This thread's block. */
    public static long address() {
        Object[] block = BLOCK.get();
        if (block == null) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(SIZE);
            block = new Object[] {buffer, Pointer.nativeValue(Native.getDirectBufferPointer(buffer))};
            BLOCK.set(block);
        }
        return (Long) block[1];
    }
}
