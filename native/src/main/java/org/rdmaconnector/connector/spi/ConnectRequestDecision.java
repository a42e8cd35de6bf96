package org.rdmaconnector.connector.spi;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Whether a listener takes a CONNECT_REQUEST: the allowed peers, then the connection limits (per listener and per
 * peer address), checked and counted in one step so that concurrent requests can never pass a limit. An admitted
 * request holds a slot until {@link #release(InetAddress)}; a refused one has a {@link Reason}, sent to the peer as
 * private data and counted. Thread-safe.
 */
final class ConnectRequestDecision {
    /** Why a request was rejected. */
    enum Reason {
        /** The peer is not among the allowed peers. */
        PEER_NOT_ALLOWED("peer not allowed"),
        /** The listener holds MaxConnections connections. */
        MAX_CONNECTIONS("listener full"),
        /** The peer holds MaxConnectionsPerPeer connections. */
        MAX_CONNECTIONS_PER_PEER("too many connections from this peer"),
        /** An endpoint rejected it, or no endpoint accepted it under endpoint-decides, or the policy is reject. */
        NOT_ACCEPTED("not accepted"),
        /** The queue pair or its memory could not be set up, or the listener is stopping. */
        NO_RESOURCES("no resources");

        private final String text;

        Reason(String text) {
            this.text = text;
        }

        /** The private data sent with rdma_reject: short, ASCII, the same for every request of this reason. */
        byte[] privateData() {
            return ("rejected: " + text).getBytes(StandardCharsets.US_ASCII);
        }
    }

    private final ListenerSettings settings;
    private final Map<Reason, AtomicLong> rejections = new EnumMap<>(Reason.class);
    // guarded by this
    private final Map<InetAddress, Integer> byPeer = new HashMap<>();
    private int total;

    ConnectRequestDecision(ListenerSettings settings) {
        this.settings = settings;
        for (Reason reason : Reason.values()) {
            rejections.put(reason, new AtomicLong());
        }
    }

    /**
     * Takes a slot for a request from {@code peer}.
     *
     * @return null when admitted (the caller must {@link #release} the slot once), else why not (counted)
     */
    synchronized Reason admit(InetAddress peer) {
        Reason refused = null;
        if (peer == null || !settings.allows(peer)) {
            refused = Reason.PEER_NOT_ALLOWED;
        } else if (total >= settings.maxConnections()) {
            refused = Reason.MAX_CONNECTIONS;
        } else if (byPeer.getOrDefault(peer, 0) >= settings.maxConnectionsPerPeer()) {
            refused = Reason.MAX_CONNECTIONS_PER_PEER;
        }
        if (refused != null) {
            rejected(refused);
            return refused;
        }
        total++;
        byPeer.merge(peer, 1, Integer::sum);
        return null;
    }

    /** Gives back the slot of an admitted request from {@code peer}. */
    synchronized void release(InetAddress peer) {
        if (byPeer.containsKey(peer)) {
            byPeer.computeIfPresent(peer, (p, n) -> n == 1 ? null : n - 1);
            total--;
        }
    }

    /** Counts a rejection that happened after admission (the endpoints' decision, a failed set-up). */
    void rejected(Reason reason) {
        rejections.get(reason).incrementAndGet();
    }

    /** Slots held now. */
    synchronized int admitted() {
        return total;
    }

    /** Rejections so far for {@code reason}. */
    long rejections(Reason reason) {
        return rejections.get(reason).get();
    }

    /** Rejections so far, by reason. */
    Map<Reason, Long> rejections() {
        Map<Reason, Long> copy = new EnumMap<>(Reason.class);
        rejections.forEach((reason, count) -> copy.put(reason, count.get()));
        return copy;
    }

    /** The limits, for messages. */
    String describeLimits() {
        return "MaxConnections " + settings.maxConnections() + ", MaxConnectionsPerPeer "
            + settings.maxConnectionsPerPeer();
    }
}
