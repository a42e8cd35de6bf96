package org.rdmaconnector.connector.spi;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.rdmaconnector.connector.AcceptPolicy;

/**
 * What an activation (JCA activation spec, OSGi whiteboard service properties) asks of a listener. The
 * {@code DEFAULT_*} constants are the one source of its defaults; {@link #builder()} makes settings from the text and
 * wrapper values of an activation, with every problem named by its property.
 *
 * @param address the local address to listen on (an address of an RDMA device, or 0.0.0.0 for all)
 * @param port the port, 1 to 65535
 * @param backlog pending connection requests the listening id holds
 * @param acceptPolicy what happens to a CONNECT_REQUEST from an allowed peer
 * @param allowedPeers peers allowed to connect, in CIDR notation; empty allows all; others are rejected
 * @param receiveBufferCount receives posted per accepted connection (and send slots for replies)
 * @param receiveBufferSize bytes per receive buffer (the largest message)
 * @param maxConcurrentDeliveries deliveries running at once for one endpoint
 * @param maxConnections connections the listener holds at once, from all peers
 * @param maxConnectionsPerPeer connections the listener holds at once from one peer IP address
 * @param idleTimeoutSeconds the liveness rule: a connection with no completion, no CM event and no delivery running
 *     for this long is taken for dead (RC has no keepalive: a peer that crashed or lost power never says so); it is
 *     disconnected, its endpoints get DISCONNECTED with status -ETIMEDOUT, and its slot and memory are freed. 0 keeps
 *     idle connections forever
 * @param deliveryAttempts attempts of one delivery to an endpoint that throws (or rolls back), after which it is
 *     counted and logged as undeliverable; an endpoint that is unavailable is waited for without using attempts
 * @param ackTimeout the accepted queue pairs' local ACK timeout, 4.096 us x 2^ackTimeout, after which a packet
 *     the peer did not acknowledge is sent again (rdma_set_option(3) RDMA_OPTION_ID_ACK_TIMEOUT); 0 leaves the
 *     RDMA CM's choice (on RoCE about half a second), which makes every lost packet cost that long
 * @param minRnrTimerMicros what the accepted connections' receiver-not-ready NAKs make a peer that outran their
 *     receives wait before it sends again, in microseconds, rounded up to an InfiniBand RNR timer
 *     ({@link org.rdmaconnector.verbs.RnrTimer}); 0 leaves the RDMA CM's 655.36 ms. A paused or busy listener's peer
 *     tries again this often, and goes on this long after a receive is posted again
 * @param setupRetry how the listener retries listening while it cannot, and for how long
 * @param deliveryActive whether the activation delivers from the start; false starts it paused
 *     ({@link Activation#resumeDelivery()} starts delivery), its connections accepted and held back by RC flow control
 * @param deliverSendCompletions whether the successful completions of a connection's own signaled sends, WRITEs and
 *     READs (its send queue's) reach the endpoints; false leaves them to whoever awaits the {@code WorkRequest}, and
 *     wakes no delivery thread for them. Failed ones, and every received message, are delivered either way
 */
public record ListenerSettings(String address, int port, int backlog, AcceptPolicy acceptPolicy,
                               List<Cidr> allowedPeers, int receiveBufferCount, int receiveBufferSize,
                               int maxConcurrentDeliveries, int maxConnections, int maxConnectionsPerPeer,
                               int idleTimeoutSeconds, int deliveryAttempts, int ackTimeout,
                               int minRnrTimerMicros, SetupRetry setupRetry, boolean deliveryActive,
                               boolean deliverSendCompletions) {
    /** Default Backlog. */
    public static final int DEFAULT_BACKLOG = 16;
    /** Default AcceptPolicy. */
    public static final AcceptPolicy DEFAULT_ACCEPT_POLICY = AcceptPolicy.ACCEPT;
    /** Default ReceiveBufferCount. */
    public static final int DEFAULT_RECEIVE_BUFFER_COUNT = 16;
    /** Default ReceiveBufferSize. */
    public static final int DEFAULT_RECEIVE_BUFFER_SIZE = 4096;
    /** Default MaxConcurrentDeliveries. */
    public static final int DEFAULT_MAX_CONCURRENT_DELIVERIES = 8;
    /** Default MaxConnections. */
    public static final int DEFAULT_MAX_CONNECTIONS = 64;
    /** Default MaxConnectionsPerPeer. */
    public static final int DEFAULT_MAX_CONNECTIONS_PER_PEER = 16;
    /** Default IdleTimeoutSeconds: ten minutes. */
    public static final int DEFAULT_IDLE_TIMEOUT_SECONDS = 600;
    /** Default DeliveryAttempts. */
    public static final int DEFAULT_DELIVERY_ATTEMPTS = 3;
    /** Default AckTimeout: 0, the RDMA CM's own. */
    public static final int DEFAULT_ACK_TIMEOUT = 0;
    /** Default MinRnrTimerMicros: 640, rdma-core's ibv_rc_pingpong's timer (code 12). */
    public static final int DEFAULT_MIN_RNR_TIMER_MICROS = 640;
    /** Default SetupIntervalMillis: the first pause between tries to listen. */
    public static final int DEFAULT_SETUP_INTERVAL_MILLIS = 1000;
    /** Default SetupMaxIntervalMillis: the longest pause between tries to listen. */
    public static final int DEFAULT_SETUP_MAX_INTERVAL_MILLIS = 30_000;
    /** Default SetupAttempts: 0, try for ever. */
    public static final int DEFAULT_SETUP_ATTEMPTS = 0;
    /** Default DeliveryActive: deliver from the start. */
    public static final boolean DEFAULT_DELIVERY_ACTIVE = true;
    /** Default DeliverSendCompletions: deliver them. */
    public static final boolean DEFAULT_DELIVER_SEND_COMPLETIONS = true;

    /** An empty or null peer list allows all peers; a null setup retry is the default. */
    public ListenerSettings {
        allowedPeers = allowedPeers == null ? List.of() : List.copyOf(allowedPeers);
        setupRetry = setupRetry == null ? SetupRetry.DEFAULTS : setupRetry;
    }

    /** Settings with the default RNR timer and setup retry, delivering from the start, send completions included. */
    public ListenerSettings(String address, int port, int backlog, AcceptPolicy acceptPolicy, List<Cidr> allowedPeers,
                            int receiveBufferCount, int receiveBufferSize, int maxConcurrentDeliveries,
                            int maxConnections, int maxConnectionsPerPeer, int idleTimeoutSeconds,
                            int deliveryAttempts, int ackTimeout) {
        this(address, port, backlog, acceptPolicy, allowedPeers, receiveBufferCount, receiveBufferSize,
            maxConcurrentDeliveries, maxConnections, maxConnectionsPerPeer, idleTimeoutSeconds, deliveryAttempts,
            ackTimeout, DEFAULT_MIN_RNR_TIMER_MICROS, SetupRetry.DEFAULTS, DEFAULT_DELIVERY_ACTIVE,
            DEFAULT_DELIVER_SEND_COMPLETIONS);
    }

    /** Settings with IdleTimeoutSeconds, DeliveryAttempts and AckTimeout at their defaults. */
    public ListenerSettings(String address, int port, int backlog, AcceptPolicy acceptPolicy, List<Cidr> allowedPeers,
                            int receiveBufferCount, int receiveBufferSize, int maxConcurrentDeliveries,
                            int maxConnections, int maxConnectionsPerPeer) {
        this(address, port, backlog, acceptPolicy, allowedPeers, receiveBufferCount, receiveBufferSize,
            maxConcurrentDeliveries, maxConnections, maxConnectionsPerPeer, DEFAULT_IDLE_TIMEOUT_SECONDS,
            DEFAULT_DELIVERY_ATTEMPTS, DEFAULT_ACK_TIMEOUT);
    }

    /**
     * Settings from the string and wrapper values of an activation spec or service properties; null means the
     * default, and MaxConnections and MaxConnectionsPerPeer are at their defaults. Range problems are left to
     * {@link #problems()}; {@link #builder()} reports the accept policy and peer list as problems too.
     *
     * @throws IllegalArgumentException for an unknown accept policy or a malformed peer list
     */
    public static ListenerSettings of(String address, Integer port, Integer backlog, String acceptPolicy,
                                      String allowedPeers, Integer receiveBufferCount, Integer receiveBufferSize,
                                      Integer maxConcurrentDeliveries) {
        return builder().address(address).port(port).backlog(backlog).receiveBufferCount(receiveBufferCount)
            .receiveBufferSize(receiveBufferSize).maxConcurrentDeliveries(maxConcurrentDeliveries)
            .settings(parsePolicy(acceptPolicy), Cidr.parseList(allowedPeers));
    }

    /** A builder with every property unset (its default; Address and Port have none). */
    public static Builder builder() {
        return new Builder();
    }

    private static int or(Integer value, int otherwise) {
        return value == null ? otherwise : value;
    }

    private static AcceptPolicy parsePolicy(String text) {
        return text == null || text.isBlank() ? DEFAULT_ACCEPT_POLICY : AcceptPolicy.parse(text);
    }

    /** Every problem, each naming its property; empty when valid. */
    public List<SettingProblem> problems() {
        List<SettingProblem> problems = new ArrayList<>();
        if (address == null || address.isBlank()) {
            problems.add(new SettingProblem("Address",
                "Address must be set (an IP address of an RDMA device, or 0.0.0.0)"));
        } else if (Cidr.addressProblem(address) != null) {
            problems.add(new SettingProblem("Address", Cidr.addressProblem(address)));
        }
        SettingProblem.checkRange(problems, "Port", port, 1, 65_535);
        SettingProblem.checkRange(problems, "Backlog", backlog, 1, 65_535);
        SettingProblem.checkRange(problems, "ReceiveBufferCount", receiveBufferCount, 1, 4096);
        SettingProblem.checkRange(problems, "ReceiveBufferSize", receiveBufferSize, 1, 1 << 24);
        SettingProblem.checkRange(problems, "MaxConcurrentDeliveries", maxConcurrentDeliveries, 1, 1024);
        SettingProblem.checkRange(problems, "MaxConnections", maxConnections, 1, 65_535);
        SettingProblem.checkRange(problems, "MaxConnectionsPerPeer", maxConnectionsPerPeer, 1, 65_535);
        SettingProblem.checkRange(problems, "IdleTimeoutSeconds", idleTimeoutSeconds, 0, 31_536_000);
        SettingProblem.checkRange(problems, "DeliveryAttempts", deliveryAttempts, 1, 1000);
        SettingProblem.checkRange(problems, "AckTimeout", ackTimeout, 0, 31);
        SettingProblem.checkRnrTimer(problems, "MinRnrTimerMicros", minRnrTimerMicros);
        problems.addAll(setupRetry.problems());
        if (2L * receiveBufferCount * receiveBufferSize > (1L << 30)) {
            problems.add(new SettingProblem("ReceiveBufferCount", "ReceiveBufferCount x ReceiveBufferSize ("
                + receiveBufferCount + " x " + receiveBufferSize
                + ") must be at most 512 MiB: each connection registers twice that for receives and replies"));
        }
        if (listenerCqDepth() > MAX_LISTENER_CQ_DEPTH) {
            problems.add(new SettingProblem("MaxConnections", "MaxConnections x 2 x ReceiveBufferCount ("
                + maxConnections + " x 2 x " + receiveBufferCount + ") must be at most " + MAX_LISTENER_CQ_DEPTH
                + ": the listener's completion queue on a device holds every receive and send its connections post"));
        }
        if (maxConnectionsPerPeer > maxConnections) {
            problems.add(new SettingProblem("MaxConnectionsPerPeer", "MaxConnectionsPerPeer ("
                + maxConnectionsPerPeer + ") must not be larger than MaxConnections (" + maxConnections + ")"));
        }
        return problems;
    }

    /** The most CQ entries a listener asks of a device (rdma-core providers allow from 32 Ki to 4 Mi). */
    public static final int MAX_LISTENER_CQ_DEPTH = 1 << 22;

    /**
     * The entries of the listener's completion queue on a device: every connection the limit allows posts at most
     * ReceiveBufferCount receives and as many sends, so the queue cannot overrun.
     */
    public long listenerCqDepth() {
        return 2L * maxConnections * receiveBufferCount;
    }

    /**
     * Throws when {@link #problems()} finds any.
     *
     * @throws IllegalArgumentException listing every problem
     */
    public ListenerSettings validate() {
        SettingProblem.throwIfAny("invalid RDMA listener settings", problems());
        return this;
    }

    /** The listen address. */
    public InetSocketAddress socketAddress() {
        InetAddress literal = Cidr.literal(address);
        if (literal == null) {
            throw new IllegalArgumentException(Cidr.addressProblem(address));
        }
        return new InetSocketAddress(literal, port);
    }

    /** Whether {@code peer} may connect. */
    public boolean allows(InetAddress peer) {
        return allowedPeers.isEmpty() || allowedPeers.stream().anyMatch(c -> c.contains(peer));
    }

    /**
     * Whether two activations can share one listening id: everything but the delivery concurrency, attempts and
     * DeliveryActive (each endpoint's own) is equal (the address compared as the address it spells, so {@code ::ffff:10.0.0.1}
     * shares with {@code 10.0.0.1}).
     */
    public boolean sharesListenerWith(ListenerSettings other) {
        return shared().equals(other.shared());
    }

    private ListenerSettings shared() {
        String canonical = Cidr.literal(address) == null ? address.trim() : Cidr.canonical(address);
        return new ListenerSettings(canonical, port, backlog, acceptPolicy, allowedPeers, receiveBufferCount,
            receiveBufferSize, 1, maxConnections, maxConnectionsPerPeer, idleTimeoutSeconds, 1, ackTimeout,
            minRnrTimerMicros, setupRetry, true, deliverSendCompletions);
    }

    /**
     * Listener settings from the text and wrapper values of an activation spec or service properties, null meaning
     * the default. Unlike {@link #of}, an unknown accept policy or a malformed peer list is a problem like the others,
     * named by its property. Not thread-safe.
     */
    public static final class Builder {
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
        private SetupRetry setupDefaults = SetupRetry.DEFAULTS;
        private Boolean deliveryActive;
        private Boolean deliverSendCompletions;

        private Builder() {
        }

        /** Address: the local IP address to listen on. */
        public Builder address(String value) {
            address = value;
            return this;
        }

        /** Port; unset is a problem. */
        public Builder port(Integer value) {
            port = value;
            return this;
        }

        /** Backlog. */
        public Builder backlog(Integer value) {
            backlog = value;
            return this;
        }

        /** AcceptPolicy: accept, reject or endpoint-decides. */
        public Builder acceptPolicy(String value) {
            acceptPolicy = value;
            return this;
        }

        /** AllowedPeers: CIDR blocks separated by commas or white space. */
        public Builder allowedPeers(String value) {
            allowedPeers = value;
            return this;
        }

        /** ReceiveBufferCount. */
        public Builder receiveBufferCount(Integer value) {
            receiveBufferCount = value;
            return this;
        }

        /** ReceiveBufferSize. */
        public Builder receiveBufferSize(Integer value) {
            receiveBufferSize = value;
            return this;
        }

        /** MaxConcurrentDeliveries. */
        public Builder maxConcurrentDeliveries(Integer value) {
            maxConcurrentDeliveries = value;
            return this;
        }

        /** MaxConnections. */
        public Builder maxConnections(Integer value) {
            maxConnections = value;
            return this;
        }

        /** MaxConnectionsPerPeer. */
        public Builder maxConnectionsPerPeer(Integer value) {
            maxConnectionsPerPeer = value;
            return this;
        }

        /** IdleTimeoutSeconds; 0 keeps idle connections forever. */
        public Builder idleTimeoutSeconds(Integer value) {
            idleTimeoutSeconds = value;
            return this;
        }

        /** DeliveryAttempts. */
        public Builder deliveryAttempts(Integer value) {
            deliveryAttempts = value;
            return this;
        }

        /** AckTimeout: 4.096 us x 2^value; 0 leaves the RDMA CM's choice. */
        public Builder ackTimeout(Integer value) {
            ackTimeout = value;
            return this;
        }

        /** MinRnrTimerMicros: rounded up to an InfiniBand RNR timer; 0 leaves the RDMA CM's 655.36 ms. */
        public Builder minRnrTimerMicros(Integer value) {
            minRnrTimerMicros = value;
            return this;
        }

        /** SetupIntervalMillis: the first pause between tries to listen. */
        public Builder setupIntervalMillis(Integer value) {
            setupIntervalMillis = value;
            return this;
        }

        /** SetupMaxIntervalMillis: the longest pause between tries to listen. */
        public Builder setupMaxIntervalMillis(Integer value) {
            setupMaxIntervalMillis = value;
            return this;
        }

        /** SetupAttempts: tries to listen before the activation gives up; 0 for ever. */
        public Builder setupAttempts(Integer value) {
            setupAttempts = value;
            return this;
        }

        /**
         * Where the unset Setup* properties come from (a resource adapter's or runtime's own settings); the
         * {@code DEFAULT_SETUP_*} constants unless set. Null restores those.
         */
        public Builder setupDefaults(SetupRetry defaults) {
            setupDefaults = defaults == null ? SetupRetry.DEFAULTS : defaults;
            return this;
        }

        /** DeliveryActive: false starts the activation paused. */
        public Builder deliveryActive(Boolean value) {
            deliveryActive = value;
            return this;
        }

        /**
         * DeliverSendCompletions: false leaves the successful completions of a connection's own sends, WRITEs and
         * READs to whoever awaits them, delivering none.
         */
        public Builder deliverSendCompletions(Boolean value) {
            deliverSendCompletions = value;
            return this;
        }

        /** Every problem, each naming its property; empty when {@link #build()} succeeds. */
        public List<SettingProblem> problems() {
            List<SettingProblem> parsing = new ArrayList<>();
            AcceptPolicy policy = DEFAULT_ACCEPT_POLICY;
            try {
                policy = parsePolicy(acceptPolicy);
            } catch (IllegalArgumentException e) {
                parsing.add(new SettingProblem("AcceptPolicy", e.getMessage()));
            }
            List<Cidr> peers = List.of();
            try {
                peers = Cidr.parseList(allowedPeers);
            } catch (IllegalArgumentException e) {
                parsing.add(new SettingProblem("AllowedPeers", e.getMessage()));
            }
            // the rest checked with defaults in place of what did not parse
            List<SettingProblem> problems = new ArrayList<>();
            for (SettingProblem problem : settings(policy, peers).problems()) {
                boolean unset = problem.property().equals("Port") && port == null;
                problems.add(unset ? new SettingProblem("Port", "Port must be set") : problem);
            }
            problems.addAll(parsing);
            return problems;
        }

        /**
         * The settings.
         *
         * @throws IllegalArgumentException listing every problem
         */
        public ListenerSettings build() {
            SettingProblem.throwIfAny("invalid RDMA listener settings", problems());
            return settings(parsePolicy(acceptPolicy), Cidr.parseList(allowedPeers));
        }

        private ListenerSettings settings(AcceptPolicy policy, List<Cidr> peers) {
            return new ListenerSettings(address, port == null ? 0 : port, or(backlog, DEFAULT_BACKLOG), policy, peers,
                or(receiveBufferCount, DEFAULT_RECEIVE_BUFFER_COUNT),
                or(receiveBufferSize, DEFAULT_RECEIVE_BUFFER_SIZE),
                or(maxConcurrentDeliveries, DEFAULT_MAX_CONCURRENT_DELIVERIES),
                or(maxConnections, DEFAULT_MAX_CONNECTIONS),
                or(maxConnectionsPerPeer, DEFAULT_MAX_CONNECTIONS_PER_PEER),
                or(idleTimeoutSeconds, DEFAULT_IDLE_TIMEOUT_SECONDS), or(deliveryAttempts, DEFAULT_DELIVERY_ATTEMPTS),
                or(ackTimeout, DEFAULT_ACK_TIMEOUT), or(minRnrTimerMicros, DEFAULT_MIN_RNR_TIMER_MICROS),
                SetupRetry.of(setupIntervalMillis, setupMaxIntervalMillis, setupAttempts, setupDefaults),
                deliveryActive == null ? DEFAULT_DELIVERY_ACTIVE : deliveryActive,
                deliverSendCompletions == null ? DEFAULT_DELIVER_SEND_COMPLETIONS : deliverSendCompletions);
        }
    }
}
