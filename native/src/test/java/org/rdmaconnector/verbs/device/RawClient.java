package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.verbs.CmEvent;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.ConnectionParameters;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.PortSpace;
import org.rdmaconnector.verbs.TestProbes;

/**
 * A client made with the verbs layer, the way {@link Loopback} makes one, for what a {@link
 * org.rdmaconnector.connector.spi.ChannelSet} does not offer a test: a chosen source address (a second peer on
 * another address of dummy0), the private data of a REJECTED, and the kernel objects it holds being known (one id,
 * queue pair, completion queue, protection domain and memory region). Blocking; one thread at a time.
 */
final class RawClient implements AutoCloseable {
    private static final int SLOTS = 2;
    private static final int SLOT_SIZE = 512;

    private final EventChannel events;
    private final CmId id;
    private final Loopback.Side side;
    private final List<WorkCompletion> polled = new ArrayList<>();
    private CmEvent outcome;

    private RawClient(EventChannel events, CmId id, Loopback.Side side) {
        this.events = events;
        this.id = id;
        this.side = side;
    }

    /** Resolves {@code listener} from {@code source} and sets up the queue pair and buffer; not connected yet. */
    static RawClient resolve(String source, InetSocketAddress listener) {
        EventChannel events = EventChannel.create();
        try {
            CmId id = events.createId(PortSpace.TCP);
            id.resolveAddress(new InetSocketAddress(source, 0), listener, Loopback.TIMEOUT);
            Loopback.expect(events, CmEventType.ADDR_RESOLVED);
            id.resolveRoute(Loopback.TIMEOUT);
            Loopback.expect(events, CmEventType.ROUTE_RESOLVED);
            return new RawClient(events, id, Loopback.Side.on(id, SLOTS, SLOT_SIZE, SLOTS));
        } catch (RuntimeException | Error e) {
            events.close();
            throw e;
        }
    }

    /** Sends the connect request; returns the listener's answer, ESTABLISHED or REJECTED (anything else fails). */
    CmEvent connect() {
        id.connect(ConnectionParameters.defaults());
        assertTrue(events.awaitEvent(Loopback.TIMEOUT), "no answer to the connect request within " + Loopback.TIMEOUT);
        CmEvent event = events.getEvent();
        assertNotNull(event, "the channel was readable but had no event");
        assertTrue(event.type() == CmEventType.ESTABLISHED || event.type() == CmEventType.REJECTED,
            () -> "expected ESTABLISHED or REJECTED, got " + event + " status " + event.status());
        outcome = event;
        return event;
    }

    boolean isEstablished() {
        return outcome != null && outcome.type() == CmEventType.ESTABLISHED;
    }

    /** The rejection's private data as text, without the transport's zero padding. */
    String rejection() {
        byte[] data = outcome.privateData();
        int end = data.length;
        while (end > 0 && data[end - 1] == 0) {
            end--;
        }
        return new String(Arrays.copyOf(data, end), StandardCharsets.US_ASCII);
    }

    /** Posts a receive, sends {@code message} (at most 512 bytes) and returns the bytes the listener sent back. */
    byte[] echo(byte[] message) throws InterruptedException {
        ByteBuffer buffer = side.buffer().buffer();
        side.id().queuePair().postReceive(side.buffer(), SLOT_SIZE, SLOT_SIZE, 1);
        buffer.put(0, message);
        side.id().queuePair().postSend(side.buffer(), 0, message.length, 0, true);
        WorkCompletion sent = awaitCompletion(0);
        assertTrue(sent.isSuccess(), sent.toString());
        WorkCompletion received = awaitCompletion(1);
        assertTrue(received.isSuccess(), received.toString());
        byte[] echoed = new byte[received.byteLength()];
        buffer.get(SLOT_SIZE, echoed);
        return echoed;
    }

    private WorkCompletion awaitCompletion(long wrId) throws InterruptedException {
        TestProbes.await("work completion " + wrId, Loopback.TIMEOUT, () -> {
            polled.addAll(side.cq().poll(4));
            return polled.stream().anyMatch(wc -> wc.wrId() == wrId);
        });
        WorkCompletion wc = polled.stream().filter(c -> c.wrId() == wrId).findFirst().orElseThrow();
        polled.remove(wc);
        return wc;
    }

    /** The disconnect handshake when established (the listener answers), then everything is freed. */
    @Override
    public void close() {
        try {
            if (isEstablished()) {
                id.disconnect();
                if (events.awaitEvent(Loopback.TIMEOUT)) {
                    CmEvent event = events.getEvent();
                    assertEquals(CmEventType.DISCONNECTED, event == null ? null : event.type(), "the listener answers");
                }
            }
        } finally {
            events.close();
            side.context().close();
        }
    }
}
