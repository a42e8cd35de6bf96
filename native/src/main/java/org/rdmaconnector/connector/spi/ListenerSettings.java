package org.rdmaconnector.connector.spi;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.rdmaconnector.connector.AcceptPolicy;

/**
 * What an activation (JCA activation spec, OSGi whiteboard service properties) asks of a listener.
 *
 * @param address the local address to listen on (an address of an RDMA device, or 0.0.0.0 for all)
 * @param port the port, 1 to 65535
 * @param backlog pending connection requests the listening id holds
 * @param acceptPolicy what happens to a CONNECT_REQUEST from an allowed peer
 * @param allowedPeers peers allowed to connect, in CIDR notation; empty allows all; others are rejected
 * @param receiveBufferCount receives posted per accepted connection (and send slots for replies)
 * @param receiveBufferSize bytes per receive buffer (the largest message)
 * @param maxConcurrentDeliveries deliveries running at once for one endpoint
 */
public record ListenerSettings(String address, int port, int backlog, AcceptPolicy acceptPolicy,
                               List<Cidr> allowedPeers, int receiveBufferCount, int receiveBufferSize,
                               int maxConcurrentDeliveries) {
    /** Defaults: backlog 16, accept, all peers, 16 buffers of 4096 bytes, 8 concurrent deliveries. */
    public ListenerSettings {
        allowedPeers = allowedPeers == null ? List.of() : List.copyOf(allowedPeers);
    }

    /**
     * Settings from the string and wrapper values of an activation spec or service properties; null means the
     * default. Range problems are left to {@link #problems()}.
     *
     * @throws IllegalArgumentException for an unknown accept policy or a malformed peer list
     */
    public static ListenerSettings of(String address, Integer port, Integer backlog, String acceptPolicy,
                                      String allowedPeers, Integer receiveBufferCount, Integer receiveBufferSize,
                                      Integer maxConcurrentDeliveries) {
        return new ListenerSettings(address, port == null ? 0 : port, backlog == null ? 16 : backlog,
            acceptPolicy == null || acceptPolicy.isBlank() ? AcceptPolicy.ACCEPT : AcceptPolicy.parse(acceptPolicy),
            Cidr.parseList(allowedPeers), receiveBufferCount == null ? 16 : receiveBufferCount,
            receiveBufferSize == null ? 4096 : receiveBufferSize,
            maxConcurrentDeliveries == null ? 8 : maxConcurrentDeliveries);
    }

    /** Every problem, one sentence each naming the property; empty when valid. */
    public List<String> problems() {
        List<String> problems = new ArrayList<>();
        if (address == null || address.isBlank()) {
            problems.add("Address must be set (an IP address of an RDMA device, or 0.0.0.0)");
        } else if (Cidr.literal(address) == null) {
            problems.add("Address '" + address + "' is not an IP address");
        }
        ChannelSettings.check(problems, "Port", port, 1, 65_535);
        ChannelSettings.check(problems, "Backlog", backlog, 1, 65_535);
        ChannelSettings.check(problems, "ReceiveBufferCount", receiveBufferCount, 1, 4096);
        ChannelSettings.check(problems, "ReceiveBufferSize", receiveBufferSize, 1, 1 << 24);
        ChannelSettings.check(problems, "MaxConcurrentDeliveries", maxConcurrentDeliveries, 1, 1024);
        if (2L * receiveBufferCount * receiveBufferSize > (1L << 30)) {
            problems.add("ReceiveBufferCount x ReceiveBufferSize (" + receiveBufferCount + " x " + receiveBufferSize
                + ") must be at most 512 MiB: each connection registers twice that for receives and replies");
        }
        return problems;
    }

    /**
     * Throws when {@link #problems()} finds any.
     *
     * @throws IllegalArgumentException listing every problem
     */
    public ListenerSettings validate() {
        List<String> problems = problems();
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid RDMA listener settings: " + String.join("; ", problems));
        }
        return this;
    }

    /** The listen address. */
    public InetSocketAddress socketAddress() {
        InetAddress literal = Cidr.literal(address);
        if (literal == null) {
            throw new IllegalArgumentException("Address '" + address + "' is not an IP address");
        }
        return new InetSocketAddress(literal, port);
    }

    /** Whether {@code peer} may connect. */
    public boolean allows(InetAddress peer) {
        return allowedPeers.isEmpty() || allowedPeers.stream().anyMatch(c -> c.contains(peer));
    }

    /** Whether two activations can share one listening id: everything but the delivery concurrency is equal. */
    public boolean sharesListenerWith(ListenerSettings other) {
        return withConcurrency(1).equals(other.withConcurrency(1));
    }

    private ListenerSettings withConcurrency(int concurrency) {
        return new ListenerSettings(address.trim(), port, backlog, acceptPolicy, allowedPeers, receiveBufferCount,
            receiveBufferSize, concurrency);
    }

}
