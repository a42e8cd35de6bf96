package org.rdmaconnector.it.app;

import jakarta.ejb.ConcurrencyManagement;
import jakarta.ejb.ConcurrencyManagementType;
import jakarta.ejb.Singleton;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.zip.CRC32;
import org.rdmaconnector.connector.InboundConnection;

/** What the MDBs saw, per connection of the listener (by its number), in delivery order. */
@Singleton
@ConcurrencyManagement(ConcurrencyManagementType.BEAN)
public class Recorder {
    private final Map<Long, Seen> connections = new LinkedHashMap<>();

    /** One inbound connection as the MDBs saw it: its peer, CM events, and receives (sequence, bytes). */
    public static final class Seen {
        private final long number;
        private final InetSocketAddress peer;
        private final List<String> cmEvents = new ArrayList<>();
        private final List<Long> sequences = new ArrayList<>();
        private final List<byte[]> messages = new ArrayList<>();
        private final List<String> failures = new ArrayList<>();
        private int echoes;

        Seen(long number, InetSocketAddress peer) {
            this.number = number;
            this.peer = peer;
        }

        private Seen copy() {
            Seen c = new Seen(number, peer);
            c.cmEvents.addAll(cmEvents);
            c.sequences.addAll(sequences);
            c.messages.addAll(messages);
            c.failures.addAll(failures);
            c.echoes = echoes;
            return c;
        }

        public long number() {
            return number;
        }

        public InetSocketAddress peer() {
            return peer;
        }

        public List<String> cmEvents() {
            return cmEvents;
        }

        public List<Long> sequences() {
            return sequences;
        }

        public List<byte[]> messages() {
            return messages;
        }

        public boolean disconnected() {
            return cmEvents.contains("DISCONNECTED");
        }

        /**
         * Disconnected, and every receive's echo has completed or failed: completions and CM events are delivered
         * in order each, not with each other, so an echo's completion may come after the DISCONNECTED.
         */
        public boolean settled() {
            return disconnected() && echoes + failures.size() >= messages.size();
        }

        /** Whether the k-th receive carried the listener's sequence number k (1, 2, ...). */
        public boolean inSequence() {
            for (int i = 0; i < sequences.size(); i++) {
                if (sequences.get(i) != i + 1) {
                    return false;
                }
            }
            return true;
        }

        /**
         * One line: {@code connection N from HOST events E,... received R bytes B crc32 X in-sequence S echoes N
         * failures F}.
         */
        public String line() {
            CRC32 crc = new CRC32();
            long bytes = 0;
            for (byte[] m : messages) {
                crc.update(m);
                bytes += m.length;
            }
            return "connection " + number + " from " + peer.getAddress().getHostAddress() + " events "
                + String.join(",", cmEvents) + " received " + messages.size() + " bytes " + bytes + " crc32 "
                + Long.toHexString(crc.getValue()) + " in-sequence " + inSequence() + " echoes "
                + echoes + " failures " + failures.size() + (failures.isEmpty() ? "" : " " + failures);
        }
    }

    private Seen seen(InboundConnection connection) {
        return connections.computeIfAbsent(connection.number(), n -> new Seen(n, connection.peerAddress()));
    }

    public synchronized void cmEvent(InboundConnection connection, String type) {
        seen(connection).cmEvents.add(type);
        notifyAll();
    }

    public synchronized void received(InboundConnection connection, long sequence, byte[] message) {
        Seen s = seen(connection);
        s.sequences.add(sequence);
        s.messages.add(message);
        notifyAll();
    }

    /** A failed receive or echo of {@code connection}, and why. */
    public synchronized void failed(InboundConnection connection, String why) {
        seen(connection).failures.add(why);
        notifyAll();
    }

    /** An echo of {@code connection} completed successfully. */
    public synchronized void echoed(InboundConnection connection) {
        seen(connection).echoes++;
        notifyAll();
    }

    /**
     * Waits until the connections that {@code which} selects satisfy {@code done}, or {@code within} has passed;
     * returns copies of the selected connections, in order of their numbers, either way.
     */
    public synchronized List<Seen> await(Predicate<Seen> which, Predicate<List<Seen>> done, Duration within)
        throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            List<Seen> selected = new ArrayList<>();
            for (Seen s : connections.values()) {
                if (which.test(s)) {
                    selected.add(s.copy());
                }
            }
            long left = deadline - System.nanoTime();
            if (done.test(selected) || left <= 0) {
                return selected;
            }
            wait(Math.max(1, left / 1_000_000));
        }
    }
}
