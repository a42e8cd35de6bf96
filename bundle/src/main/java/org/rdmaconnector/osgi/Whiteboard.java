package org.rdmaconnector.osgi;

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
    /** Pending connection requests (default 16). */
    public static final String BACKLOG = "rdma.backlog";
    /** accept, reject or endpoint-decides (default accept). */
    public static final String ACCEPT_POLICY = "rdma.acceptPolicy";
    /** CIDR blocks allowed to connect, comma separated (default all). */
    public static final String ALLOWED_PEERS = "rdma.allowedPeers";
    /** Receives posted per connection (default 16). */
    public static final String RECEIVE_BUFFER_COUNT = "rdma.receiveBufferCount";
    /** Bytes per receive (default 4096). */
    public static final String RECEIVE_BUFFER_SIZE = "rdma.receiveBufferSize";
    /** Deliveries at once to this service (default 8). */
    public static final String MAX_CONCURRENT_DELIVERIES = "rdma.maxConcurrentDeliveries";

    private Whiteboard() {
    }
}
