package org.rdmaconnector.ra;

import jakarta.resource.ResourceException;
import jakarta.resource.spi.ActivationSpec;
import jakarta.resource.spi.InvalidPropertyException;
import jakarta.resource.spi.ResourceAdapter;
import java.beans.IntrospectionException;
import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.List;
import org.rdmaconnector.connector.spi.ListenerSettings;

/**
 * The activation of a {@link org.rdmaconnector.connector.CmEventListener} or
 * {@link org.rdmaconnector.connector.CompletionListener} endpoint: where to listen and how. Address and Port are
 * required; the rest have defaults (see {@link ListenerSettings#of}). Endpoints on the same Address and Port share
 * one listener and must agree on all properties but MaxConcurrentDeliveries.
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
    private ResourceAdapter resourceAdapter;

    /**
     * The listener settings these properties make.
     *
     * @throws InvalidPropertyException naming every invalid property and why
     */
    public ListenerSettings settings() throws InvalidPropertyException {
        List<String> problems = new ArrayList<>();
        List<String> invalid = new ArrayList<>();
        ListenerSettings settings = null;
        try {
            settings = ListenerSettings.of(address, port, backlog, acceptPolicy, allowedPeers, receiveBufferCount,
                receiveBufferSize, maxConcurrentDeliveries);
            problems.addAll(settings.problems());
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
            invalid.add(e.getMessage().startsWith("accept policy") ? "acceptPolicy" : "allowedPeers");
        }
        if (port == null) {
            problems.removeIf(p -> p.startsWith("Port must be from"));
            problems.add(0, "Port must be set");
        }
        if (problems.isEmpty()) {
            return settings;
        }
        for (String problem : problems) {
            String first = problem.split(" ")[0];
            if (!first.isEmpty() && Character.isUpperCase(first.charAt(0))) {
                invalid.add(Character.toLowerCase(first.charAt(0)) + first.substring(1));
            }
        }
        InvalidPropertyException e = new InvalidPropertyException("invalid RDMA activation: "
            + String.join("; ", problems));
        List<PropertyDescriptor> descriptors = new ArrayList<>();
        for (String name : invalid.stream().distinct().toList()) {
            try {
                descriptors.add(new PropertyDescriptor(name, RdmaActivationSpec.class));
            } catch (IntrospectionException ignored) {
                // not a property of this class: the message still names it
            }
        }
        e.setInvalidPropertyDescriptors(descriptors.toArray(new PropertyDescriptor[0]));
        throw e;
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

    /** Pending connection requests the listening id holds (default 16). */
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

    /** Receives posted per accepted connection (default 16). */
    public Integer getReceiveBufferCount() {
        return receiveBufferCount;
    }

    public void setReceiveBufferCount(Integer receiveBufferCount) {
        this.receiveBufferCount = receiveBufferCount;
    }

    /** Bytes per receive buffer: the largest message (default 4096). */
    public Integer getReceiveBufferSize() {
        return receiveBufferSize;
    }

    public void setReceiveBufferSize(Integer receiveBufferSize) {
        this.receiveBufferSize = receiveBufferSize;
    }

    /** Deliveries running at once for this endpoint (default 8). */
    public Integer getMaxConcurrentDeliveries() {
        return maxConcurrentDeliveries;
    }

    public void setMaxConcurrentDeliveries(Integer maxConcurrentDeliveries) {
        this.maxConcurrentDeliveries = maxConcurrentDeliveries;
    }

    @Override
    public String toString() {
        return "RdmaActivationSpec[" + address + ":" + port + ", policy " + acceptPolicy + "]";
    }
}
