package org.rdmaconnector.verbs;

import com.sun.jna.Native;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.jna.IbVerbs;

/**
 * A protection domain ({@code struct ibv_pd}, ibv_alloc_pd(3)): the parent of memory regions and queue pairs.
 * Closing it closes them first. Thread-safe.
 */
public final class ProtectionDomain extends NativeResource {
    private final DeviceContext context;
    private final long pd;

    ProtectionDomain(DeviceContext context, long pd) {
        this.context = context;
        this.pd = pd;
        dependOn(context);
    }

    /** The device context it was allocated on. */
    public DeviceContext context() {
        return context;
    }

    /**
     * Registers a direct buffer (ibv_reg_mr(3)), from its position to its limit.
     *
     * @param buffer a direct ByteBuffer with at least one byte remaining; it must stay reachable while registered
     *               (the region holds it)
     * @param access the access flags; REMOTE_WRITE requires LOCAL_WRITE
     * @throws RdmaException ENOMEM when the locked-memory limit is too low
     */
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) {
        if (buffer == null || !buffer.isDirect()) {
            throw new IllegalArgumentException("buffer must be a direct ByteBuffer, was "
                + (buffer == null ? "null" : "a heap buffer"));
        }
        if (!buffer.hasRemaining()) {
            throw new IllegalArgumentException("buffer must have at least one byte remaining, has 0");
        }
        if (access == null) {
            throw new IllegalArgumentException("access must not be null (use an empty set for local read only)");
        }
        if (access.contains(Access.REMOTE_WRITE) && !access.contains(Access.LOCAL_WRITE)) {
            throw new IllegalArgumentException("access REMOTE_WRITE requires LOCAL_WRITE (ibv_reg_mr(3))");
        }
        ByteBuffer region = buffer.slice();
        long address = com.sun.jna.Pointer.nativeValue(Native.getDirectBufferPointer(region));
        acquire();
        try {
            long mr = IbVerbs.ibv_reg_mr(pd, address, region.capacity(), Access.flags(access));
            if (mr == 0) {
                throw RdmaErrors.lastError("ibv_reg_mr", region.capacity() + " bytes on " + context.deviceName());
            }
            return new MemoryRegion(this, mr, region, address, access);
        } finally {
            release();
        }
    }

    /** Registers {@code buffer} with LOCAL_WRITE access (enough for sends and receives). */
    public MemoryRegion register(ByteBuffer buffer) {
        return register(buffer, EnumSet.of(Access.LOCAL_WRITE));
    }

    long address() {
        return pd;
    }

    @Override
    protected void destroy() {
        int rc = IbVerbs.ibv_dealloc_pd(pd);
        if (rc != 0) {
            throw RdmaErrors.fromReturnCode("ibv_dealloc_pd", rc, context.deviceName());
        }
    }
}
