package org.rdmaconnector.verbs.device;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.InboundConnection;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.EndpointSink;

/**
 * An endpoint that sends every message back on its connection and counts instead of recording (tens of thousands of
 * messages pass): receives, whether each connection's came in sequence, and connections that failed (a DISCONNECTED
 * with a non-zero status: the CM's own after the peer stopped answering). Or, made by {@link #greeting}, one that
 * speaks first, answers nothing and disconnects once each greeting has its reply, as ucmatose's server does (its
 * client waits for messages before it sends, and for the server's disconnect at the end).
 */
final class CountingEcho implements EndpointSink {
    final AtomicLong receives = new AtomicLong();
    final AtomicLong failures = new AtomicLong();
    final AtomicLong outOfSequence = new AtomicLong();
    /** Echoes that completed with an error. */
    final AtomicLong failedSends = new AtomicLong();
    final List<String> failureEvents = new CopyOnWriteArrayList<>();
    private final Map<InboundConnection, Long> lastSequence = new ConcurrentHashMap<>();
    private final int greetings;
    private final int greetingSize;
    private volatile Activation activation;
    private volatile long delayMillis;
    /** While non-null: the echoes held back, in order, instead of sent. */
    private List<Runnable> held;

    /** An echo. */
    CountingEcho() {
        this(0, 0);
    }

    private CountingEcho(int greetings, int greetingSize) {
        this.greetings = greetings;
        this.greetingSize = greetingSize;
    }

    /** An endpoint that sends {@code count} messages of {@code size} bytes once a connection is established. */
    static CountingEcho greeting(int count, int size) {
        return new CountingEcho(count, size);
    }

    /** The activation whose figures {@link #stats()} adds. */
    void activation(Activation activation) {
        this.activation = activation;
    }

    /** Makes each delivery take {@code millis} longer (a slow endpoint); 0 for none. */
    void delay(long millis) {
        delayMillis = millis;
    }

    /** Holds every echo back from now on (the messages are still received and counted) until {@link #release}. */
    synchronized void hold() {
        held = new ArrayList<>();
    }

    /** Sends the echoes held back, in order, and echoes at once again. */
    synchronized void release() {
        List<Runnable> echoes = held;
        held = null;
        for (Runnable echo : echoes) {
            try {
                echo.run();
            } catch (RuntimeException e) { // the connection failed meanwhile: what is left is not sent
                System.out.println("CountingEcho: a held echo was not sent: " + e);
            }
        }
    }

    /** {@code name=number} pairs for people and for {@link Peer#numbers}. */
    String stats() {
        return "connections=" + activation.connectionCount() + " receives=" + receives + " failures=" + failures
            + " failedSends=" + failedSends + " held=" + heldCount() + " outOfSequence=" + outOfSequence
            + " undeliverable=" + activation.undeliverable() + " errors=" + activation.errors() + " failureEvents="
            + failureEvents;
    }

    private synchronized int heldCount() {
        return held == null ? 0 : held.size();
    }

    @Override
    public String name() {
        return "counting-echo";
    }

    @Override
    public boolean receivesCmEvents() {
        return true;
    }

    @Override
    public boolean receivesCompletions() {
        return true;
    }

    @Override
    public void deliver(ConnectionEvent event) {
        if (event.type() == CmEventType.ESTABLISHED) {
            for (int i = 0; i < greetings; i++) {
                event.connection().send(new byte[greetingSize]);
            }
        }
        if (event.type() == CmEventType.DISCONNECTED) {
            // its sequence is kept: completions of the connection may still be delivered after its DISCONNECTED
            if (event.status() != 0) {
                failures.incrementAndGet();
                failureEvents.add("DISCONNECTED(" + event.status() + ")");
            }
        }
    }

    @Override
    public void deliver(MessageCompletion c) throws InterruptedException {
        long delay = delayMillis;
        if (delay > 0) {
            Thread.sleep(delay); // a slow endpoint, by design
        }
        if (!c.isReceive()) {
            if (!c.isSuccess()) {
                failedSends.incrementAndGet();
            }
            return;
        }
        // every receive is numbered, a failed one too; a delivery attempted again (the send below threw) repeats one
        Long last = lastSequence.put(c.connection(), c.sequence());
        if (c.sequence() != (last == null ? 1 : last + 1) && !Long.valueOf(c.sequence()).equals(last)) {
            outOfSequence.incrementAndGet();
        }
        if (!c.isSuccess()) {
            return;
        }
        if (greetings == 0) {
            byte[] data = c.data();
            InboundConnection connection = c.connection(); // taken now: the completion is valid during its delivery
            if (!holdBack(() -> connection.send(data))) {
                connection.send(data); // before counting: if it throws, the delivery is attempted again
            }
        } else if (c.sequence() == greetings) {
            c.connection().disconnect(); // every greeting answered: as ucmatose's server, end the connection
        }
        receives.incrementAndGet();
    }

    private synchronized boolean holdBack(Runnable echo) {
        if (held == null) {
            return false;
        }
        held.add(echo);
        return true;
    }
}
