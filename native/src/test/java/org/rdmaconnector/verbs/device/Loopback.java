package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.verbs.CmEvent;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.CompletionChannel;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.ConnectionParameters;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.MemoryRegion;
import org.rdmaconnector.verbs.PortSpace;
import org.rdmaconnector.verbs.ProtectionDomain;
import org.rdmaconnector.verbs.QueuePairCapabilities;

/**
 * A connection over Soft-RoCE between two ids of this JVM on {@link #ADDRESS} (rxe0 in the soft-RDMA VM), made the
 * way rping makes it, with each side's device context view, protection domain, completion channel, queue and a
 * registered buffer of {@code slots} x {@code slotSize} bytes. Closing it closes everything. Public for the device
 * tests of package-private seams in other packages.
 */
public final class Loopback implements AutoCloseable {
    public static final String ADDRESS = System.getProperty("rdma.test.address", "10.0.0.1");
    public static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final AtomicInteger PORTS = new AtomicInteger(20000 + (int) (ProcessHandle.current().pid() % 1000) * 20);

    /** One end: the objects a connection uses on its side. */
    public record Side(CmId id, DeviceContext context, ProtectionDomain pd, CompletionChannel channel, CompletionQueue cq,
                MemoryRegion buffer) {
        static Side on(CmId id, int slots, int slotSize, int queueDepth) {
            DeviceContext context = id.openDeviceContext();
            ProtectionDomain pd = context.allocateProtectionDomain();
            CompletionChannel channel = context.createCompletionChannel();
            CompletionQueue cq = context.createCompletionQueue(2 * queueDepth + 2, channel, 0);
            id.createQueuePair(pd, cq, cq, QueuePairCapabilities.of(queueDepth, queueDepth));
            MemoryRegion buffer = pd.register(ByteBuffer.allocateDirect(slots * slotSize));
            return new Side(id, context, pd, channel, cq, buffer);
        }

        /** Posts a receive into every slot, wr_id = slot index. */
        void postReceives(int slots, int slotSize) {
            for (int i = 0; i < slots; i++) {
                id.queuePair().postReceive(buffer, i * slotSize, slotSize, i);
            }
        }
    }

    final EventChannel serverEvents;
    final EventChannel clientEvents;
    final CmId listener;
    public final Side client;
    final Side server;
    final byte[] connectPrivateData;

    private Loopback(EventChannel serverEvents, EventChannel clientEvents, CmId listener, Side client, Side server,
                     byte[] connectPrivateData) {
        this.serverEvents = serverEvents;
        this.clientEvents = clientEvents;
        this.listener = listener;
        this.client = client;
        this.server = server;
        this.connectPrivateData = connectPrivateData;
    }

    public static int nextPort() {
        return PORTS.incrementAndGet();
    }

    /** The next CM event of {@code channel}, which must be of {@code type}. */
    static CmEvent expect(EventChannel channel, CmEventType type) {
        assertTrue(channel.awaitEvent(TIMEOUT), "no CM event within " + TIMEOUT + ", expected " + type);
        CmEvent event = channel.getEvent();
        assertNotNull(event, "the channel was readable but had no event");
        assertEquals(type, event.type(), () -> "expected " + type + ", got " + event + " status " + event.status());
        return event;
    }

    /** A listening id on a fresh port of {@link #ADDRESS}. */
    public static CmId listen(EventChannel channel) {
        CmId listener = channel.createId(PortSpace.TCP);
        listener.bind(new InetSocketAddress(ADDRESS, nextPort()));
        listener.listen(16);
        return listener;
    }

    /** An id on {@code channel} whose address and route to {@code port} are resolved. */
    public static CmId resolved(EventChannel channel, int port) {
        CmId id = channel.createId(PortSpace.TCP);
        id.resolveAddress(null, new InetSocketAddress(ADDRESS, port), TIMEOUT);
        expect(channel, CmEventType.ADDR_RESOLVED);
        id.resolveRoute(TIMEOUT);
        expect(channel, CmEventType.ROUTE_RESOLVED);
        return id;
    }

    /**
     * Connects a client to a fresh listener; each side gets a buffer of {@code slots} x {@code slotSize} bytes and
     * the server has a receive posted in every slot before it accepts. Both ESTABLISHED events are consumed.
     */
    public static Loopback connect(int slots, int slotSize) {
        EventChannel serverEvents = EventChannel.create();
        EventChannel clientEvents = EventChannel.create();
        try {
            CmId listener = listen(serverEvents);
            CmId clientId = resolved(clientEvents, listener.localAddress().getPort());
            Side client = Side.on(clientId, slots, slotSize, slots);
            byte[] hello = ("hello " + clientId.localAddress()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            clientId.connect(ConnectionParameters.defaults().withPrivateData(hello));
            CmEvent request = expect(serverEvents, CmEventType.CONNECT_REQUEST);
            assertEquals(listener, request.listenId());
            Side server = Side.on(request.id(), slots, slotSize, slots);
            server.postReceives(slots, slotSize);
            request.id().accept(ConnectionParameters.defaults());
            expect(clientEvents, CmEventType.ESTABLISHED);
            expect(serverEvents, CmEventType.ESTABLISHED);
            return new Loopback(serverEvents, clientEvents, listener, client, server, request.privateData());
        } catch (RuntimeException | Error e) {
            serverEvents.close();
            clientEvents.close();
            throw e;
        }
    }

    /** Sends {@code length} bytes from slot 0 of the client's buffer and waits for the send's work completion. */
    void sendAndAwait(int length, long wrId) {
        client.id().queuePair().postSend(client.buffer(), 0, length, wrId, true);
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            for (org.rdmaconnector.connector.WorkCompletion wc : client.cq().poll(1)) {
                assertTrue(wc.isSuccess() && wc.wrId() == wrId, wc.toString());
                return;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no work completion for send " + wrId + " within " + TIMEOUT);
    }

    /** The disconnect handshake: the client asks, the server answers, both get DISCONNECTED. */
    void disconnect() {
        client.id().disconnect();
        expect(serverEvents, CmEventType.DISCONNECTED);
        server.id().disconnect();
        expect(clientEvents, CmEventType.DISCONNECTED);
    }

    @Override
    public void close() {
        // the channels close their ids (and the ids their queue pairs) before the device views go
        serverEvents.close();
        clientEvents.close();
        client.context().close();
        server.context().close();
    }
}
