package org.rdmaconnector.osgi;

import org.rdmaconnector.connector.spi.ListenerSettings;

/**
 * The service properties a whiteboard {@link org.rdmaconnector.connector.CmEventListener} or
 * {@link org.rdmaconnector.connector.CompletionListener} service carries; the meanings and defaults are those of the
 * resource adapter's activation spec. Services on the same address and port share one listener.
 */
public final class Whiteboard {
    /** Local IP address to listen on (required). */
    public static final String ADDRESS = "rdma.address";
    /** Port (required). */
    public static final String PORT = "rdma.port";
    /** Pending connection requests (default {@value ListenerSettings#DEFAULT_BACKLOG}). */
    public static final String BACKLOG = "rdma.backlog";
    /** accept, reject or endpoint-decides (default accept). */
    public static final String ACCEPT_POLICY = "rdma.acceptPolicy";
    /** CIDR blocks allowed to connect, comma separated (default all). */
    public static final String ALLOWED_PEERS = "rdma.allowedPeers";
    /** Receives posted per connection (default {@value ListenerSettings#DEFAULT_RECEIVE_BUFFER_COUNT}). */
    public static final String RECEIVE_BUFFER_COUNT = "rdma.receiveBufferCount";
    /** Bytes per receive (default {@value ListenerSettings#DEFAULT_RECEIVE_BUFFER_SIZE}). */
    public static final String RECEIVE_BUFFER_SIZE = "rdma.receiveBufferSize";
    /** Deliveries at once to this service (default {@value ListenerSettings#DEFAULT_MAX_CONCURRENT_DELIVERIES}). */
    public static final String MAX_CONCURRENT_DELIVERIES = "rdma.maxConcurrentDeliveries";
    /** Connections the listener holds at once (default {@value ListenerSettings#DEFAULT_MAX_CONNECTIONS}). */
    public static final String MAX_CONNECTIONS = "rdma.maxConnections";
    /**
     * Connections the listener holds at once from one peer IP address (default
     * {@value ListenerSettings#DEFAULT_MAX_CONNECTIONS_PER_PEER}, at most {@link #MAX_CONNECTIONS}).
     */
    public static final String MAX_CONNECTIONS_PER_PEER = "rdma.maxConnectionsPerPeer";
    /**
     * Seconds without traffic after which a connection is taken for dead (default
     * {@value ListenerSettings#DEFAULT_IDLE_TIMEOUT_SECONDS}; 0 keeps idle connections forever).
     */
    public static final String IDLE_TIMEOUT_SECONDS = "rdma.idleTimeoutSeconds";
    /**
     * Attempts of a delivery this service fails before it is counted as undeliverable (default
     * {@value ListenerSettings#DEFAULT_DELIVERY_ATTEMPTS}).
     */
    public static final String DELIVERY_ATTEMPTS = "rdma.deliveryAttempts";
    /**
     * The accepted queue pairs' ACK timeout, 4.096 us x 2^value before an unacknowledged packet is sent again
     * (default {@value ListenerSettings#DEFAULT_ACK_TIMEOUT}: the RDMA CM's choice; 0 to 31).
     */
    public static final String ACK_TIMEOUT = "rdma.ackTimeout";
    /**
     * What the accepted connections' receiver-not-ready NAKs make a peer that outran their receives wait before it
     * sends again, in microseconds, rounded up to an InfiniBand RNR timer (default
     * {@value ListenerSettings#DEFAULT_MIN_RNR_TIMER_MICROS}; 0 leaves the RDMA CM's 655.36 ms; 10 to 655360).
     */
    public static final String MIN_RNR_TIMER_MICROS = "rdma.minRnrTimerMicros";
    /**
     * false starts the service paused: connections are accepted and held back by RC flow control until
     * {@code resumeDelivery} on its activation MBean (default {@value ListenerSettings#DEFAULT_DELIVERY_ACTIVE}).
     */
    public static final String DELIVERY_ACTIVE = "rdma.deliveryActive";
    /**
     * false leaves the successful completions of the service's connections' own signaled sends, WRITEs and READs to
     * whoever awaits the {@code WorkRequest}, delivering none; failed ones and received messages are delivered either
     * way (default {@value ListenerSettings#DEFAULT_DELIVER_SEND_COMPLETIONS}).
     */
    public static final String DELIVER_SEND_COMPLETIONS = "rdma.deliverSendCompletions";
    /**
     * The first pause, in ms, between tries to listen while the listener cannot (default: the runtime
     * configuration's setupIntervalMillis, else {@value ListenerSettings#DEFAULT_SETUP_INTERVAL_MILLIS}).
     */
    public static final String SETUP_INTERVAL_MILLIS = "rdma.setupIntervalMillis";
    /**
     * The longest pause, in ms, between tries to listen (default: the runtime configuration's, else
     * {@value ListenerSettings#DEFAULT_SETUP_MAX_INTERVAL_MILLIS}).
     */
    public static final String SETUP_MAX_INTERVAL_MILLIS = "rdma.setupMaxIntervalMillis";
    /**
     * Tries to listen before the activation gives up, 0 for ever (default: the runtime configuration's, else
     * {@value ListenerSettings#DEFAULT_SETUP_ATTEMPTS}).
     */
    public static final String SETUP_ATTEMPTS = "rdma.setupAttempts";

    private Whiteboard() {
    }
}
