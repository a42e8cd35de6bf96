package org.rdmaconnector.connector;

import java.nio.ByteBuffer;
import java.util.Set;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A registered memory region ({@code struct ibv_mr}) over a direct buffer, made by {@link RdmaConnection#register}
 * or {@link InboundConnection#register}: sends, receives, RDMA writes and reads of that connection name a range of it
 * by offset and length. Peers may access it only with the {@link #remoteAccess()} it was registered with, through
 * the {@link #remoteRegion()} it is handed to them as. Thread-safe.
 */
@ProviderType
public interface MemoryRegion extends AutoCloseable {
    /** The registered memory: a buffer of {@link #length()} bytes, position 0 (a duplicate each call). */
    ByteBuffer buffer();

    /** The length in bytes. */
    int length();

    /** The local key. */
    int lkey();

    /** The remote key, for peers' RDMA reads and writes. */
    int rkey();

    /** The virtual address of the first byte, for peers' RDMA reads and writes. */
    long remoteAddress();

    /** What peers may do to it: empty for a region registered for local access only (the default). */
    Set<RemoteAccess> remoteAccess();

    /**
     * The region as a peer names it (address, length, rkey, {@link #remoteAccess()}), to hand over in a message
     * ({@link RemoteRegion#toBytes()}).
     *
     * @throws IllegalStateException when it is registered for local access only, or closed
     */
    RemoteRegion remoteRegion();

    /** Whether it is deregistered. */
    boolean isClosed();

    /** Deregisters it (ibv_dereg_mr); twice is a no-op. */
    @Override
    void close();
}
