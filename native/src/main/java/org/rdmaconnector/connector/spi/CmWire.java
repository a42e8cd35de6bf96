package org.rdmaconnector.connector.spi;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.function.Function;
import org.rdmaconnector.connector.MemoryRegion;
import org.rdmaconnector.connector.RemoteAccess;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.ConnectionParameters;
import org.rdmaconnector.verbs.PolledCompletion;
import org.rdmaconnector.verbs.QueuePairCapabilities;

/**
 * A {@link ConnectionWire} on a real CM id: the queue pair and slots ({@link RcConnection}) come from the per-device
 * queue set of the id's device, asked for only when the connection is accepted.
 */
final class CmWire implements ConnectionWire {
    private final CmId id;
    private final InetSocketAddress peer;
    private final InetSocketAddress local;
    private final ListenerSettings settings;
    private final QueueSets queues;
    private volatile DeviceQueueSet device;
    private volatile RcConnection rc;
    private boolean destroyed;

    /** The listener's queue sets, one per device. */
    @FunctionalInterface
    interface QueueSets {
        /**
         * Runs {@code setUp} on the queue set of {@code deviceName} (opened when needed), so that the set is not
         * released while a queue pair is set up on it.
         *
         * @throws IllegalStateException when the listener is stopping: nothing is created then
         */
        RcConnection setUp(String deviceName, Function<DeviceQueueSet, RcConnection> setUp);
    }

    CmWire(CmId id, ListenerSettings settings, QueueSets queues) {
        this.id = id;
        this.peer = id.peerAddress();
        this.local = id.localAddress();
        this.settings = settings;
        this.queues = queues;
    }

    @Override
    public InetSocketAddress peerAddress() {
        return peer;
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public void allocate(DeviceQueueSet.QueuePairRoute route) {
        int count = settings.receiveBufferCount();
        RcConnection connection;
        synchronized (this) {
            if (destroyed) {
                throw new IllegalStateException("the connection with " + peer + " is destroyed");
            }
            connection = queues.setUp(id.deviceName(), d -> {
                RcConnection c = new RcConnection(id, d,
                    QueuePairCapabilities.of(count, count), settings.receiveBufferSize(), count, count);
                d.route(c.qpNumber(), route);
                device = d;
                return c;
            });
            rc = connection;
        }
        for (int i = 0; i < count; i++) {
            connection.receiveStaged();
        }
    }

    @Override
    public void accept() {
        if (settings.ackTimeout() != 0) {
            id.setAckTimeout(settings.ackTimeout());
        }
        id.accept(ConnectionParameters.defaults());
        RcConnection c = rc;
        if (c != null) { // null once destroyed meanwhile
            c.setMinRnrTimer(settings.minRnrTimerMicros()); // the CM's move to RTR set 655.36 ms
        }
    }

    @Override
    public void reject(byte[] privateData) {
        id.reject(privateData);
    }

    @Override
    public void disconnect() {
        RcConnection c = rc;
        if (c != null) {
            c.disconnect();
        }
    }

    @Override
    public WorkRequest send(byte[] message, int offset, int length, boolean signaled) {
        return allocated().sendStaged(message, offset, length, signaled);
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<RemoteAccess> remoteAccess) {
        return allocated().register(buffer, remoteAccess);
    }

    @Override
    public WorkRequest post(RdmaOperation operation) {
        RcConnection c = allocated();
        return c.post(operation, c.registered(operation.local()));
    }

    @Override
    public void repostReceive(WorkRequest receive) {
        allocated().receiveAgain(receive);
    }

    @Override
    public void releaseReceive(WorkRequest receive) {
        RcConnection c = rc;
        if (c != null) {
            c.giveBackLent(receive);
        }
    }

    @Override
    public void readReceived(WorkRequest receive, byte[] destination, int offset, int length) {
        allocated().readLent(receive, destination, offset, length);
    }

    @Override
    public PostedRequest complete(PolledCompletion completion) {
        RcConnection c = rc;
        return c == null ? null : c.complete(completion, true);
    }

    @Override
    public int outstanding() {
        RcConnection c = rc;
        return c == null ? 0 : c.outstanding();
    }

    private RcConnection allocated() {
        RcConnection c = rc;
        if (c == null) {
            throw new IllegalStateException("the connection with " + peer + " has no queue pair");
        }
        return c;
    }

    @Override
    public void destroy() {
        RcConnection c;
        DeviceQueueSet d;
        synchronized (this) {
            if (destroyed) {
                return;
            }
            destroyed = true;
            c = rc;
            d = device;
        }
        if (c == null) {
            id.close();
            return;
        }
        d.unroute(c.qpNumber());
        c.close();
    }

    @Override
    public String toString() {
        return "CmWire[" + peer + "]";
    }
}
