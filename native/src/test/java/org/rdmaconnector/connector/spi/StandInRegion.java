package org.rdmaconnector.connector.spi;

import java.nio.ByteBuffer;
import java.util.Set;
import org.rdmaconnector.connector.MemoryRegion;
import org.rdmaconnector.connector.RemoteAccess;
import org.rdmaconnector.connector.RemoteRegion;

/** A local region of {@code length} bytes for host tests of the checks: only its length and state are read. */
final class StandInRegion implements MemoryRegion {
    private final int length;
    private volatile boolean closed;

    StandInRegion(int length) {
        this.length = length;
    }

    @Override
    public ByteBuffer buffer() {
        throw new UnsupportedOperationException("no memory on the host");
    }

    @Override
    public int length() {
        return length;
    }

    @Override
    public int lkey() {
        return 1;
    }

    @Override
    public int rkey() {
        return 1;
    }

    @Override
    public long remoteAddress() {
        return 0;
    }

    @Override
    public Set<RemoteAccess> remoteAccess() {
        return Set.of();
    }

    @Override
    public RemoteRegion remoteRegion() {
        throw new IllegalStateException("registered for local access only");
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        closed = true;
    }
}
