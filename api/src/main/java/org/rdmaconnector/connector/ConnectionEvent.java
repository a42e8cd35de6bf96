package org.rdmaconnector.connector;

import java.net.InetSocketAddress;

/**
 * A CM event of a listener's connection, copied (the native event is already acknowledged). For a CONNECT_REQUEST
 * under {@link AcceptPolicy#ENDPOINT_DECIDES} the listener may {@link #accept()} or {@link #reject(byte[])} while the
 * event is delivered.
 */
public interface ConnectionEvent {
    /** The event type. */
    CmEventType type();

    /** The event's status (0, or a negative errno, or a transport reason for REJECTED). */
    int status();

    /** The connection the event is about. */
    InboundConnection connection();

    /** Private data the peer sent with its request (empty when none). */
    byte[] privateData();

    /** The address the listener listens on. */
    InetSocketAddress listenAddress();

    /** Whether this CONNECT_REQUEST waits for a listener's decision. */
    boolean isDecisionPending();

    /** Whether the request was (or is now going to be) accepted; false for other event types. */
    boolean isAccepted();

    /**
     * Accepts this CONNECT_REQUEST.
     *
     * @throws IllegalStateException unless {@link #isDecisionPending()}
     */
    void accept();

    /**
     * Rejects this CONNECT_REQUEST; the peer gets REJECTED with {@code privateData} (at most 148 bytes, or null).
     *
     * @throws IllegalStateException unless {@link #isDecisionPending()}
     */
    void reject(byte[] privateData);
}
