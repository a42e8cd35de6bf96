package org.rdmaconnector.verbs;

import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.RemoteAccess;
import org.rdmaconnector.connector.RemoteRegion;
import org.rdmaconnector.verbs.jna.IbVerbs;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;

/**
 * A registered memory region ({@code struct ibv_mr}, ibv_reg_mr(3)) over a direct buffer. Work requests name a
 * range of it by offset and length. Closed before its protection domain. Thread-safe. The verbs object behind the
 * API's {@link org.rdmaconnector.connector.MemoryRegion}.
 */
public final class MemoryRegion extends NativeResource implements org.rdmaconnector.connector.MemoryRegion {
    private final ProtectionDomain pd;
    private final long mr;
    private final ByteBuffer buffer;
    private final long address;
    private final int lkey;
    private final int rkey;
    private final Set<Access> access;
    private final Set<RemoteAccess> remoteAccess;

    MemoryRegion(ProtectionDomain pd, long mr, ByteBuffer buffer, long address, Set<Access> access) {
        this.pd = pd;
        this.access = access.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(access));
        this.remoteAccess = Access.remotePart(access);
        this.mr = mr;
        this.buffer = buffer;
        this.address = address;
        this.lkey = Mem.getInt(mr + Layout.IBV_MR_LKEY);
        this.rkey = Mem.getInt(mr + Layout.IBV_MR_RKEY);
        dependOn(pd);
    }

    /** The protection domain it is registered in. */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The registered memory: a buffer of {@link #length()} bytes, position 0 (a duplicate each call). */
    @Override
    public ByteBuffer buffer() {
        return buffer.duplicate();
    }

    /** The length in bytes. */
    @Override
    public int length() {
        return buffer.capacity();
    }

    /** The local key. */
    @Override
    public int lkey() {
        return lkey;
    }

    /** The remote key, for peers' RDMA reads and writes. */
    @Override
    public int rkey() {
        return rkey;
    }

    /** The virtual address of the first byte, for peers' RDMA reads and writes. */
    @Override
    public long remoteAddress() {
        return address;
    }

    /** The access flags it was registered with. */
    public Set<Access> access() {
        return access;
    }

    @Override
    public Set<RemoteAccess> remoteAccess() {
        return remoteAccess;
    }

    @Override
    public RemoteRegion remoteRegion() {
        if (remoteAccess.isEmpty()) {
            throw new IllegalStateException("the memory region of " + length() + " bytes is registered for local "
                + "access only; register it with RemoteAccess READ or WRITE to hand it to a peer");
        }
        if (isClosed()) {
            throw new IllegalStateException("the memory region of " + length() + " bytes is closed: its rkey is no "
                + "longer valid");
        }
        return new RemoteRegion(address, length(), rkey, remoteAccess);
    }

    /** Checks {@code [offset, offset + length)} lies in the region; returns its address. */
    long addressOf(int offset, int length) {
        if (offset < 0 || length < 0 || offset > buffer.capacity() - length) {
            throw new IllegalArgumentException("range [" + offset + ", " + offset + " + " + length
                + ") is outside the memory region of " + buffer.capacity() + " bytes");
        }
        return address + offset;
    }

    @Override
    protected void destroy() {
        int rc = IbVerbs.ibv_dereg_mr(mr);
        if (rc != 0) {
            throw RdmaErrors.fromReturnCode("ibv_dereg_mr", rc, null);
        }
    }
}
