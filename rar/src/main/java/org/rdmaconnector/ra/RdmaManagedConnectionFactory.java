package org.rdmaconnector.ra;

import jakarta.resource.ResourceException;
import jakarta.resource.spi.ConnectionManager;
import jakarta.resource.spi.ConnectionRequestInfo;
import jakarta.resource.spi.InvalidPropertyException;
import jakarta.resource.spi.ManagedConnection;
import jakarta.resource.spi.ManagedConnectionFactory;
import jakarta.resource.spi.ResourceAdapter;
import jakarta.resource.spi.ResourceAdapterAssociation;
import jakarta.resource.spi.ValidatingManagedConnectionFactory;
import java.io.PrintWriter;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import javax.security.auth.Subject;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.SettingProblem;

/**
 * A connection definition: which device and port, and how the channel sets of its pool are sized. Every
 * property is optional (see {@link ChannelSettings#DEFAULTS}); two factories with the same properties are equal.
 */
public class RdmaManagedConnectionFactory implements ManagedConnectionFactory, ResourceAdapterAssociation,
    ValidatingManagedConnectionFactory {
    private static final long serialVersionUID = 1L;

    private String deviceName;
    private Integer portNumber;
    private Integer cqDepth;
    private Integer completionVector;
    private Integer maxSendWr;
    private Integer maxRecvWr;
    private Integer maxInlineData;
    private Long maxRegisteredBytes;
    private Integer ackTimeout;
    private Integer minRnrTimerMicros;
    private transient RdmaResourceAdapter resourceAdapter;
    private transient PrintWriter logWriter;

    /** The settings these properties make (defaults for unset ones). */
    public ChannelSettings settings() {
        ChannelSettings d = ChannelSettings.DEFAULTS;
        return new ChannelSettings(deviceName, or(portNumber, d.portNumber()), or(cqDepth, d.cqDepth()),
            or(completionVector, d.completionVector()), or(maxSendWr, d.maxSendWr()), or(maxRecvWr, d.maxRecvWr()),
            or(maxInlineData, d.maxInlineData()), maxRegisteredBytes == null ? d.maxRegisteredBytes()
            : maxRegisteredBytes, or(ackTimeout, d.ackTimeout()), or(minRnrTimerMicros, d.minRnrTimerMicros()));
    }

    private static int or(Integer value, int otherwise) {
        return value == null ? otherwise : value;
    }

    @Override
    public Object createConnectionFactory(ConnectionManager manager) throws ResourceException {
        validate();
        return new RdmaConnectionFactoryImpl(this, manager);
    }

    @Override
    public Object createConnectionFactory() throws ResourceException {
        return createConnectionFactory(new UnpooledConnectionManager());
    }

    /**
     * Opens a channel set on the configured device and port.
     *
     * @throws RdmaResourceException naming the device and the errno (also as the error code) when it cannot be opened
     */
    @Override
    public ManagedConnection createManagedConnection(Subject subject, ConnectionRequestInfo info)
        throws ResourceException {
        ChannelSettings settings = validate();
        RdmaResourceAdapter ra = resourceAdapter;
        if (ra == null) {
            throw new ResourceException("the RDMA connection factory is not associated with the RDMA resource "
                + "adapter (deploy it as part of rdma-connector.rar)");
        }
        try {
            return new RdmaManagedConnection(this, ChannelSet.open(settings, ra.devices(), ra.engine()));
        } catch (RdmaException e) { // its message names the device (ChannelSet.open)
            throw new RdmaResourceException(e.getMessage(), e.errnoName(), e);
        } catch (RuntimeException | LinkageError e) {
            // settings the device does not allow (IllegalArgumentException), the adapter stopped: the application
            // sees the adapter's exception, not the server's generic wrapper of an unchecked one
            throw new RdmaResourceException("cannot open RDMA channels on " + settings.deviceDescription() + ": "
                + e.getMessage(), e instanceof IllegalArgumentException ? "EINVAL" : null, e);
        }
    }

    private ChannelSettings validate() throws InvalidPropertyException {
        ChannelSettings settings = settings();
        List<SettingProblem> problems = settings.problems();
        if (!problems.isEmpty()) {
            throw InvalidProperties.exception("invalid RDMA connection definition", problems,
                RdmaManagedConnectionFactory.class);
        }
        return settings;
    }

    /** Finds a pooled connection of this definition that has seen no fatal event. */
    @Override
    public ManagedConnection matchManagedConnections(@SuppressWarnings("rawtypes") Set candidates, Subject subject,
                                                     ConnectionRequestInfo info) {
        for (Object candidate : candidates) {
            if (candidate instanceof RdmaManagedConnection mc && mc.factory().equals(this) && mc.isHealthy()) {
                return mc;
            }
        }
        return null;
    }

    /** The pooled connections whose device or port failed (the server then destroys them). */
    @Override
    public Set<?> getInvalidConnections(@SuppressWarnings("rawtypes") Set candidates) {
        Set<Object> invalid = new HashSet<>();
        for (Object candidate : candidates) {
            if (candidate instanceof RdmaManagedConnection mc && !mc.isHealthy()) {
                invalid.add(mc);
            }
        }
        return invalid;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
        this.logWriter = out;
    }

    @Override
    public PrintWriter getLogWriter() {
        return logWriter;
    }

    RdmaResourceAdapter adapter() {
        return resourceAdapter;
    }

    @Override
    public ResourceAdapter getResourceAdapter() {
        return resourceAdapter;
    }

    @Override
    public void setResourceAdapter(ResourceAdapter ra) throws ResourceException {
        if (!(ra instanceof RdmaResourceAdapter rdma)) {
            throw new ResourceException("the RDMA connection factory works only with RdmaResourceAdapter, got " + ra);
        }
        this.resourceAdapter = rdma;
    }

    /** The device name; empty or unset for the first device whose port is ACTIVE. */
    public String getDeviceName() {
        return deviceName;
    }

    public void setDeviceName(String deviceName) {
        this.deviceName = deviceName;
    }

    /** The port number, from 1 (default {@value ChannelSettings#DEFAULT_PORT_NUMBER}). */
    public Integer getPortNumber() {
        return portNumber;
    }

    public void setPortNumber(Integer portNumber) {
        this.portNumber = portNumber;
    }

    /** Completion queue entries of each channel set (default {@value ChannelSettings#DEFAULT_CQ_DEPTH}). */
    public Integer getCqDepth() {
        return cqDepth;
    }

    public void setCqDepth(Integer cqDepth) {
        this.cqDepth = cqDepth;
    }

    /** Completion vector of each completion queue (default {@value ChannelSettings#DEFAULT_COMPLETION_VECTOR}). */
    public Integer getCompletionVector() {
        return completionVector;
    }

    public void setCompletionVector(Integer completionVector) {
        this.completionVector = completionVector;
    }

    /** Send work requests per queue pair (default {@value ChannelSettings#DEFAULT_MAX_SEND_WR}). */
    public Integer getMaxSendWr() {
        return maxSendWr;
    }

    public void setMaxSendWr(Integer maxSendWr) {
        this.maxSendWr = maxSendWr;
    }

    /** Receive work requests per queue pair (default {@value ChannelSettings#DEFAULT_MAX_RECV_WR}). */
    public Integer getMaxRecvWr() {
        return maxRecvWr;
    }

    public void setMaxRecvWr(Integer maxRecvWr) {
        this.maxRecvWr = maxRecvWr;
    }

    /**
     * A message up to this many bytes is sent inline, IBV_SEND_INLINE (default
     * {@value ChannelSettings#DEFAULT_MAX_INLINE_DATA}: never).
     */
    public Integer getMaxInlineData() {
        return maxInlineData;
    }

    public void setMaxInlineData(Integer maxInlineData) {
        this.maxInlineData = maxInlineData;
    }

    /** The limit on memory registered through one channel set, in bytes (default
     * {@value ChannelSettings#DEFAULT_MAX_REGISTERED_BYTES}). */
    public Long getMaxRegisteredBytes() {
        return maxRegisteredBytes;
    }

    public void setMaxRegisteredBytes(Long maxRegisteredBytes) {
        this.maxRegisteredBytes = maxRegisteredBytes;
    }

    /** The queue pairs' ACK timeout, 4.096 us x 2^value (default {@value ChannelSettings#DEFAULT_ACK_TIMEOUT}: the
     * RDMA CM's choice; from 0 to 31). */
    public Integer getAckTimeout() {
        return ackTimeout;
    }

    public void setAckTimeout(Integer ackTimeout) {
        this.ackTimeout = ackTimeout;
    }

    /** What the endpoints' RNR NAKs make the peer wait, in microseconds, rounded up to an RNR timer (default
     * {@value ChannelSettings#DEFAULT_MIN_RNR_TIMER_MICROS}; 0 leaves the RDMA CM's 655.36 ms). */
    public Integer getMinRnrTimerMicros() {
        return minRnrTimerMicros;
    }

    public void setMinRnrTimerMicros(Integer minRnrTimerMicros) {
        this.minRnrTimerMicros = minRnrTimerMicros;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RdmaManagedConnectionFactory other && settings().equals(other.settings());
    }

    @Override
    public int hashCode() {
        return Objects.hash(settings());
    }

    @Override
    public String toString() {
        return "RdmaManagedConnectionFactory[" + settings() + "]";
    }
}
