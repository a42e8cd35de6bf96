package org.rdmaconnector.connector.spi;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import org.rdmaconnector.connector.AcceptPolicy;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.InboundConnection;
import org.rdmaconnector.verbs.ConnectionParameters;

/** A delivered CM event of an accepted connection; for a pending CONNECT_REQUEST, the endpoints' decision. */
final class InboundEvent implements ConnectionEvent {
    /** Where a CONNECT_REQUEST's decision stands; NONE for the other event types. */
    enum Decision { NONE, PENDING, ACCEPTED, REJECTED }

    private final CmEventType type;
    private final int status;
    private final byte[] privateData;
    private final InboundConnection connection;
    private final InetSocketAddress listenAddress;
    private final AcceptPolicy policy;
    // guarded by this
    private Decision decision;
    private byte[] rejectData;

    InboundEvent(CmEventType type, int status, byte[] privateData, InboundConnection connection,
                 InetSocketAddress listenAddress, AcceptPolicy policy, Decision decision) {
        this.type = type;
        this.status = status;
        this.privateData = privateData == null ? new byte[0] : privateData;
        this.connection = connection;
        this.listenAddress = listenAddress;
        this.policy = policy;
        this.decision = decision;
    }

    @Override
    public CmEventType type() {
        return type;
    }

    @Override
    public int status() {
        return status;
    }

    @Override
    public InboundConnection connection() {
        return connection;
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public InetSocketAddress listenAddress() {
        return listenAddress;
    }

    @Override
    public synchronized boolean isDecisionPending() {
        return decision == Decision.PENDING;
    }

    @Override
    public synchronized boolean isAccepted() {
        return decision == Decision.ACCEPTED;
    }

    @Override
    public synchronized void accept() {
        decide(Decision.ACCEPTED, null);
    }

    @Override
    public synchronized void reject(byte[] data) {
        if (data != null && data.length > ConnectionParameters.MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("privateData must be at most " + ConnectionParameters.MAX_PRIVATE_DATA
                + " bytes, was " + data.length);
        }
        decide(Decision.REJECTED, data);
    }

    private void decide(Decision to, byte[] data) {
        if (decision != Decision.PENDING) {
            throw new IllegalStateException("this " + type + " has no decision pending (" + decision + "; the "
                + "listener's accept policy is " + policy.text() + ")");
        }
        decision = to;
        rejectData = data;
    }

    /** After delivery: a request nobody decided is rejected. */
    synchronized Decision settle() {
        if (decision == Decision.PENDING) {
            decision = Decision.REJECTED;
            rejectData = "no endpoint accepted the request".getBytes(StandardCharsets.UTF_8);
        }
        return decision;
    }

    /** The private data an endpoint rejected with, or null. */
    synchronized byte[] rejectData() {
        return rejectData;
    }

    @Override
    public String toString() {
        return type + "[connection " + connection.number() + ", peer " + connection.peerAddress() + ", status "
            + status + "]";
    }
}
