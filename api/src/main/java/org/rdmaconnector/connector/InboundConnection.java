package org.rdmaconnector.connector;

import java.net.InetSocketAddress;

/** A connection a listener accepted, as its listeners see it. Thread-safe. */
public interface InboundConnection {
    /** A number unique among the listener's connections, for logs and correlation. */
    long number();

    /** The peer's address. */
    InetSocketAddress peerAddress();

    /** The local (listening) address. */
    InetSocketAddress localAddress();

    /** Whether the connection is established and not yet disconnected. */
    boolean isConnected();

    /**
     * Sends {@code message} (at most the listener's receive buffer size) from one of the connection's registered
     * send slots; its completion also reaches the CompletionListeners.
     *
     * @throws IllegalStateException when the connection is not established or every send slot is in flight
     */
    WorkRequest send(byte[] message);

    /** Starts the disconnect handshake; DISCONNECTED follows. Twice is a no-op. */
    void disconnect();
}
