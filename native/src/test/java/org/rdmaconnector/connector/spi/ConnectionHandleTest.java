package org.rdmaconnector.connector.spi;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.ChannelSetInfo;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.RemoteAccess;
import org.rdmaconnector.connector.RemoteRegion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.MemoryRegion;
import org.rdmaconnector.verbs.RdmaErrors;
import org.rdmaconnector.verbs.jna.Layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A handle lent from a {@link Pool} over a stand-in set, on the host: whatever freeing its endpoints does, closing
 * the handle gives the pool's slot back; a set something could not be freed on is discarded, not lent again.
 */
@Timeout(10)
class ConnectionHandleTest {
    /** A set whose endpoints' close fails as a failing rdma_destroy_id makes it fail, when told to. */
    private static final class StandInSet implements ConnectionHandle.Target {
        final List<StandInEndpoint> endpoints = new ArrayList<>();
        volatile Throwable discardedFor;
        volatile boolean destroyed;

        boolean isHealthy() {
            return discardedFor == null && !destroyed;
        }

        @Override
        public RdmaEndpoint connect(InetSocketAddress remote, Duration timeout) {
            StandInEndpoint endpoint = new StandInEndpoint(remote);
            endpoints.add(endpoint);
            return endpoint;
        }

        @Override
        public MemoryRegion register(ByteBuffer buffer, java.util.Set<RemoteAccess> remoteAccess) {
            throw new UnsupportedOperationException("no memory on the host");
        }

        @Override
        public void deregister(MemoryRegion region) {
            throw new UnsupportedOperationException("no memory on the host");
        }

        @Override
        public String deviceName() {
            return "stand-in";
        }

        @Override
        public ChannelSettings settings() {
            return ChannelSettings.DEFAULTS;
        }

        @Override
        public DeviceContext context() {
            throw new UnsupportedOperationException("no device on the host");
        }

        @Override
        public ChannelSetInfo info() {
            return new ChannelSetInfo("OPEN", 10, 11, 64, 0, 0, 0, 0);
        }

        @Override
        public void discard(Throwable cause) {
            discardedFor = cause;
        }
    }

    private static final class StandInEndpoint implements RdmaEndpoint {
        final InetSocketAddress remote;
        final AtomicInteger closes = new AtomicInteger();
        volatile RuntimeException closeFails;

        StandInEndpoint(InetSocketAddress remote) {
            this.remote = remote;
        }

        @Override
        public InetSocketAddress localAddress() {
            return null;
        }

        @Override
        public InetSocketAddress peerAddress() {
            return remote;
        }

        @Override
        public boolean isConnected() {
            return closes.get() == 0;
        }

        @Override
        public WorkRequest send(org.rdmaconnector.connector.MemoryRegion region, int offset, int length,
                                boolean signaled) {
            throw new UnsupportedOperationException();
        }

        @Override
        public WorkRequest send(byte[] message, int offset, int length, boolean signaled) {
            throw new UnsupportedOperationException();
        }

        @Override
        public WorkRequest receive(org.rdmaconnector.connector.MemoryRegion region, int offset, int length) {
            throw new UnsupportedOperationException();
        }

        @Override
        public WorkRequest receive() {
            throw new UnsupportedOperationException();
        }

        @Override
        public WorkRequest write(org.rdmaconnector.connector.MemoryRegion local, int offset, int length,
                                 RemoteRegion remote, int remoteOffset, boolean signaled) {
            throw new UnsupportedOperationException();
        }

        @Override
        public WorkRequest writeWithImmediate(org.rdmaconnector.connector.MemoryRegion local, int offset, int length,
                                              RemoteRegion remote, int remoteOffset, int immediateData,
                                              boolean signaled) {
            throw new UnsupportedOperationException();
        }

        @Override
        public WorkRequest read(org.rdmaconnector.connector.MemoryRegion local, int offset, int length,
                                RemoteRegion remote, int remoteOffset, boolean signaled) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
            closes.incrementAndGet();
            RuntimeException failure = closeFails;
            if (failure != null) {
                throw failure;
            }
        }
    }

    private final List<StandInSet> opened = new ArrayList<>();
    // one slot, no wait: a slot that never comes back makes the next borrow fail at once
    private final Pool<StandInSet> pool = new Pool<>(new Pool.Settings(0, 1, Duration.ofMinutes(1), Duration.ZERO),
        () -> {
            StandInSet set = new StandInSet();
            opened.add(set);
            return set;
        }, StandInSet::isHealthy, set -> { }, set -> set.destroyed = true);

    private RdmaConnection borrow() {
        StandInSet set = pool.borrow();
        return new ConnectionHandle(set, handle -> pool.giveBack(set));
    }

    @Test
    void aHandleWhoseEndpointCannotBeDestroyedStillGivesItsSlotBackAndItsSetIsDiscarded() {
        RdmaConnection handle = borrow();
        InetSocketAddress peer = new InetSocketAddress("10.0.0.1", 7471);
        StandInEndpoint failing = (StandInEndpoint) handle.connect(peer, Duration.ofSeconds(1));
        StandInEndpoint other = (StandInEndpoint) handle.connect(peer, Duration.ofSeconds(1));
        RdmaException destroyFailed = RdmaErrors.of("rdma_destroy_id", Layout.EINVAL, "test");
        failing.closeFails = destroyFailed;

        RdmaException thrown = assertThrows(RdmaException.class, handle::close);
        assertSame(destroyFailed, thrown, "the application learns that freeing failed");
        assertTrue(handle.isClosed());
        assertEquals(1, other.closes.get(), "the other endpoint is closed all the same");
        StandInSet set = opened.get(0);
        assertSame(destroyFailed, set.discardedFor, "the set is discarded");

        Pool.Counters counters = pool.counters();
        assertEquals(0, counters.borrowed(), "the slot came back");
        assertEquals(1, counters.destroyed(), "the discarded set was destroyed, not kept");
        assertEquals(1, counters.invalid());
        assertTrue(set.destroyed);

        RdmaConnection next = borrow(); // with the slot lost this fails at once (MaxPoolSize 1, BorrowTimeout 0)
        assertEquals(2, opened.size(), "a new set, not the discarded one");
        next.close();
        assertEquals(new Pool.Counters(1, 0, 2, 1, 2, 0, 0, 1), pool.counters());
        handle.close(); // twice: a no-op
        assertEquals(1, failing.closes.get());
    }

    @Test
    void aHandleWhoseEndpointsCloseCleanlyGivesItsSetBackToBeLentAgain() {
        RdmaConnection handle = borrow();
        StandInEndpoint endpoint = (StandInEndpoint) handle.connect(new InetSocketAddress("10.0.0.1", 7471),
            Duration.ofSeconds(1));
        handle.close();
        assertFalse(endpoint.isConnected());
        assertEquals(null, opened.get(0).discardedFor);
        assertEquals(new Pool.Counters(1, 0, 1, 0, 1, 0, 0, 0), pool.counters());
        borrow().close();
        assertEquals(1, opened.size(), "the same set, lent again");
    }

    @Test
    void invalidatingDiscardsTheSetWhenAnEndpointCannotBeDestroyed() {
        StandInSet set = pool.borrow();
        ConnectionHandle handle = new ConnectionHandle(set, h -> pool.giveBack(set));
        StandInEndpoint failing = (StandInEndpoint) handle.connect(new InetSocketAddress("10.0.0.1", 7471),
            Duration.ofSeconds(1));
        failing.closeFails = RdmaErrors.of("rdma_destroy_id", Layout.EINVAL, "test");
        assertThrows(RdmaException.class, handle::invalidate);
        assertTrue(handle.isClosed());
        assertTrue(set.discardedFor instanceof RdmaException);
        pool.giveBack(set); // what the container's pool does next
        assertEquals(1, pool.counters().destroyed());
    }
}
