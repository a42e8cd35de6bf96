package org.rdmaconnector.connector;

import java.nio.ByteBuffer;

/**
 * A registered memory region ({@code struct ibv_mr}) over a direct buffer, made by {@link RdmaConnection#register}:
 * sends and receives of that connection's endpoints name a range of it by offset and length. Thread-safe.
 */
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

    /** Whether it is deregistered. */
    boolean isClosed();

    /** Deregisters it (ibv_dereg_mr); twice is a no-op. */
    @Override
    void close();
}
