package org.rdmaconnector.ra;

import jakarta.resource.ResourceException;
import jakarta.resource.spi.ActivationSpec;
import jakarta.resource.spi.InvalidPropertyException;
import jakarta.resource.spi.ResourceAdapter;
import java.util.List;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.connector.spi.SettingProblem;

/**
 * The activation of a {@link org.rdmaconnector.connector.CmEventListener} or
 * {@link org.rdmaconnector.connector.CompletionListener} endpoint: where to listen and how. Address and Port are
 * required; the rest have defaults (the {@code DEFAULT_*} constants of {@link ListenerSettings}). Endpoints on the
 * same Address and Port share one listener and must agree on all properties but MaxConcurrentDeliveries.
 */
public class RdmaActivationSpec implements ActivationSpec {
    private String address;
    private Integer port;
    private Integer backlog;
    private String acceptPolicy;
    private String allowedPeers;
    private Integer receiveBufferCount;
    private Integer receiveBufferSize;
    private Integer maxConcurrentDeliveries;
    private Integer maxConnections;
    private Integer maxConnectionsPerPeer;
    private Integer idleTimeoutSeconds;
    private Integer deliveryAttempts;
    private Integer ackTimeout;
    private Integer minRnrTimerMicros;
    private Integer setupIntervalMillis;
    private Integer setupMaxIntervalMillis;
    private Integer setupAttempts;
    private Boolean deliveryActive;
    private Boolean deliverSendCompletions;
    private ResourceAdapter resourceAdapter;

    /**
     * The listener settings these properties make.
     *
     * @throws InvalidPropertyException naming every invalid property and why
     */
    public ListenerSettings settings() throws InvalidPropertyException {
        ListenerSettings.Builder builder = ListenerSettings.builder().address(address).port(port).backlog(backlog)
            .acceptPolicy(acceptPolicy).allowedPeers(allowedPeers).receiveBufferCount(receiveBufferCount)
            .receiveBufferSize(receiveBufferSize).maxConcurrentDeliveries(maxConcurrentDeliveries)
            .maxConnections(maxConnections).maxConnectionsPerPeer(maxConnectionsPerPeer)
            .idleTimeoutSeconds(idleTimeoutSeconds).deliveryAttempts(deliveryAttempts).ackTimeout(ackTimeout)
            .minRnrTimerMicros(minRnrTimerMicros)
            .setupDefaults(resourceAdapter instanceof RdmaResourceAdapter ra ? ra.setupDefaults() : null)
            .setupIntervalMillis(setupIntervalMillis).setupMaxIntervalMillis(setupMaxIntervalMillis)
            .setupAttempts(setupAttempts).deliveryActive(deliveryActive)
            .deliverSendCompletions(deliverSendCompletions);
        List<SettingProblem> problems = builder.problems();
        if (!problems.isEmpty()) {
            throw InvalidProperties.exception("invalid RDMA activation", problems, RdmaActivationSpec.class);
        }
        return builder.build();
    }

    @Override
    public void validate() throws InvalidPropertyException {
        settings();
    }

    @Override
    public ResourceAdapter getResourceAdapter() {
        return resourceAdapter;
    }

    @Override
    public void setResourceAdapter(ResourceAdapter ra) throws ResourceException {
        this.resourceAdapter = ra;
    }

    /** The local IP address to listen on (an address of an RDMA device, or 0.0.0.0). Required. */
    public String getAddress() {
        return address;
    }

    public void setAddress(String address) {
        this.address = address;
    }

    /** The port to listen on. Required. */
    public Integer getPort() {
        return port;
    }

    public void setPort(Integer port) {
        this.port = port;
    }

    /** Pending connection requests the listening id holds (default {@value ListenerSettings#DEFAULT_BACKLOG}). */
    public Integer getBacklog() {
        return backlog;
    }

    public void setBacklog(Integer backlog) {
        this.backlog = backlog;
    }

    /** accept, reject or endpoint-decides (default accept). */
    public String getAcceptPolicy() {
        return acceptPolicy;
    }

    public void setAcceptPolicy(String acceptPolicy) {
        this.acceptPolicy = acceptPolicy;
    }

    /** Peers allowed to connect, CIDR blocks separated by commas; empty allows all (default). */
    public String getAllowedPeers() {
        return allowedPeers;
    }

    public void setAllowedPeers(String allowedPeers) {
        this.allowedPeers = allowedPeers;
    }

    /** Receives posted per accepted connection (default {@value ListenerSettings#DEFAULT_RECEIVE_BUFFER_COUNT}). */
    public Integer getReceiveBufferCount() {
        return receiveBufferCount;
    }

    public void setReceiveBufferCount(Integer receiveBufferCount) {
        this.receiveBufferCount = receiveBufferCount;
    }

    /**
     * Bytes per receive buffer: the largest message (default {@value ListenerSettings#DEFAULT_RECEIVE_BUFFER_SIZE}).
     */
    public Integer getReceiveBufferSize() {
        return receiveBufferSize;
    }

    public void setReceiveBufferSize(Integer receiveBufferSize) {
        this.receiveBufferSize = receiveBufferSize;
    }

    /**
     * Deliveries running at once for this endpoint (default
     * {@value ListenerSettings#DEFAULT_MAX_CONCURRENT_DELIVERIES}).
     */
    public Integer getMaxConcurrentDeliveries() {
        return maxConcurrentDeliveries;
    }

    public void setMaxConcurrentDeliveries(Integer maxConcurrentDeliveries) {
        this.maxConcurrentDeliveries = maxConcurrentDeliveries;
    }

    /**
     * Connections the listener holds at once, from all peers (default
     * {@value ListenerSettings#DEFAULT_MAX_CONNECTIONS}, from 1 to 65535).
     */
    public Integer getMaxConnections() {
        return maxConnections;
    }

    public void setMaxConnections(Integer maxConnections) {
        this.maxConnections = maxConnections;
    }

    /**
     * Connections the listener holds at once from one peer IP address (default
     * {@value ListenerSettings#DEFAULT_MAX_CONNECTIONS_PER_PEER}, at most MaxConnections).
     */
    public Integer getMaxConnectionsPerPeer() {
        return maxConnectionsPerPeer;
    }

    public void setMaxConnectionsPerPeer(Integer maxConnectionsPerPeer) {
        this.maxConnectionsPerPeer = maxConnectionsPerPeer;
    }

    /**
     * The liveness rule: seconds without any traffic after which a connection is taken for dead, disconnected and
     * freed, its DISCONNECTED delivered with status -ETIMEDOUT (default
     * {@value ListenerSettings#DEFAULT_IDLE_TIMEOUT_SECONDS}; 0 keeps idle connections forever).
     */
    public Integer getIdleTimeoutSeconds() {
        return idleTimeoutSeconds;
    }

    public void setIdleTimeoutSeconds(Integer idleTimeoutSeconds) {
        this.idleTimeoutSeconds = idleTimeoutSeconds;
    }

    /**
     * Attempts of a delivery the endpoint fails (throws, rolls back) before it is counted and logged as undeliverable
     * (default {@value ListenerSettings#DEFAULT_DELIVERY_ATTEMPTS}, from 1 to 1000).
     */
    public Integer getDeliveryAttempts() {
        return deliveryAttempts;
    }

    public void setDeliveryAttempts(Integer deliveryAttempts) {
        this.deliveryAttempts = deliveryAttempts;
    }

    /**
     * The accepted queue pairs' ACK timeout: an unacknowledged packet is sent again after 4.096 us x 2^value
     * (default {@value ListenerSettings#DEFAULT_ACK_TIMEOUT}, the RDMA CM's choice; from 0 to 31).
     */
    public Integer getAckTimeout() {
        return ackTimeout;
    }

    public void setAckTimeout(Integer ackTimeout) {
        this.ackTimeout = ackTimeout;
    }

    /**
     * What the accepted connections' receiver-not-ready NAKs make a peer that outran their receives wait before it
     * sends again, in microseconds, rounded up to an InfiniBand RNR timer (default
     * {@value ListenerSettings#DEFAULT_MIN_RNR_TIMER_MICROS}; 0 leaves the RDMA CM's 655.36 ms; 10 to 655360).
     */
    public Integer getMinRnrTimerMicros() {
        return minRnrTimerMicros;
    }

    public void setMinRnrTimerMicros(Integer minRnrTimerMicros) {
        this.minRnrTimerMicros = minRnrTimerMicros;
    }

    /**
     * The first pause, in ms, between tries to listen while the listener cannot (default: the adapter's
     * SetupIntervalMillis, else {@value ListenerSettings#DEFAULT_SETUP_INTERVAL_MILLIS}); doubled after each try.
     */
    public Integer getSetupIntervalMillis() {
        return setupIntervalMillis;
    }

    public void setSetupIntervalMillis(Integer setupIntervalMillis) {
        this.setupIntervalMillis = setupIntervalMillis;
    }

    /**
     * The longest pause, in ms, between tries to listen (default: the adapter's SetupMaxIntervalMillis, else
     * {@value ListenerSettings#DEFAULT_SETUP_MAX_INTERVAL_MILLIS}).
     */
    public Integer getSetupMaxIntervalMillis() {
        return setupMaxIntervalMillis;
    }

    public void setSetupMaxIntervalMillis(Integer setupMaxIntervalMillis) {
        this.setupMaxIntervalMillis = setupMaxIntervalMillis;
    }

    /**
     * Tries to listen before the activation gives up (GAVE_UP in JMX; default: the adapter's SetupAttempts, else
     * {@value ListenerSettings#DEFAULT_SETUP_ATTEMPTS}, for ever).
     */
    public Integer getSetupAttempts() {
        return setupAttempts;
    }

    public void setSetupAttempts(Integer setupAttempts) {
        this.setupAttempts = setupAttempts;
    }

    /**
     * Whether the endpoint gets events from the start (default true); false starts it paused: connections are
     * accepted and held back by RC flow control until {@code resumeDelivery} on its MBean.
     */
    public Boolean getDeliveryActive() {
        return deliveryActive;
    }

    public void setDeliveryActive(Boolean deliveryActive) {
        this.deliveryActive = deliveryActive;
    }

    /**
     * Whether the endpoint gets the successful completions of its connections' own signaled sends, WRITEs and READs
     * (default true); false leaves them to whoever awaits the {@code WorkRequest}, so none costs a delivery. Failed
     * ones and received messages are delivered either way.
     */
    public Boolean getDeliverSendCompletions() {
        return deliverSendCompletions;
    }

    public void setDeliverSendCompletions(Boolean deliverSendCompletions) {
        this.deliverSendCompletions = deliverSendCompletions;
    }

    @Override
    public String toString() {
        return "RdmaActivationSpec[" + address + ":" + port + ", policy " + acceptPolicy + "]";
    }
}
