package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rdmaconnector.verbs.device.Loopback.TIMEOUT;
import static org.rdmaconnector.verbs.device.Loopback.expect;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.Completion;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.verbs.CmEvent;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.ConnectionParameters;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.PortSpace;
import org.rdmaconnector.verbs.jna.Layout;

/** The RDMA CM and the data path on Soft-RoCE: connect, send/receive, reject, errors, disconnect, migrate. */
@Tag("device")
@Timeout(180)
class CmFlowDeviceTest {
    @Test
    void connectSendReceiveDisconnect() throws Exception {
        try (Loopback link = Loopback.connect(4, 256)) {
            byte[] hello = ("hello " + link.client.id().localAddress()).getBytes(StandardCharsets.UTF_8);
            assertArrayEquals(hello, Arrays.copyOf(link.connectPrivateData, hello.length),
                "CONNECT_REQUEST carries the connect private data (a prefix of the transport's private data area)");
            assertEquals(link.client.id().localAddress(), link.server.id().peerAddress());

            byte[] message = "ping over soft-roce".getBytes(StandardCharsets.UTF_8);
            link.client.buffer().buffer().put(message);
            Completion sent = new Completion();
            link.server.cq().requestNotify(false);
            link.client.id().queuePair().postSend(link.client.buffer(), 0, message.length, 7, true);

            assertTrue(link.server.channel().awaitEvent(TIMEOUT), "no completion event for the receive");
            assertSame(link.server.cq(), link.server.channel().getCqEvent());
            assertEquals(1, link.server.cq().unackedEvents());
            link.server.cq().ackEvents();
            assertEquals(0, link.server.cq().unackedEvents());
            assertEquals(1, link.server.cq().ackedEvents());
            List<WorkCompletion> received = link.server.cq().poll(4);
            assertEquals(1, received.size());
            WorkCompletion recv = received.get(0);
            assertTrue(recv.isSuccess(), recv.statusText());
            assertEquals(WcOpcode.RECV, recv.opcode());
            assertEquals(0, recv.wrId(), "the first posted receive");
            assertEquals(message.length, recv.byteLength());
            assertEquals(link.server.id().queuePair().qpNumber(), recv.qpNumber());
            byte[] got = new byte[message.length];
            link.server.buffer().buffer().get(got);
            assertArrayEquals(message, got);

            assertFalse(sent.tryWaitForCompletion(), "nothing completes the Completion before its work completion");
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (!sent.completionDone() && System.nanoTime() < deadline) {
                for (WorkCompletion wc : link.client.cq().poll(4)) {
                    assertEquals(WcOpcode.SEND, wc.opcode());
                    assertEquals(7, wc.wrId());
                    assertTrue(wc.isSuccess(), wc.statusText());
                    sent.complete();
                }
            }
            assertTrue(sent.tryWaitForCompletion(), "the send's work completion completed it");
            assertFalse(sent.tryWaitForCompletion(), "one work completion, one count");

            link.disconnect();
        }
    }

    @Test
    void rejectCarriesItsPrivateDataAndStatus() {
        try (EventChannel server = EventChannel.create(); EventChannel client = EventChannel.create()) {
            CmId listener = Loopback.listen(server);
            CmId active = Loopback.resolved(client, listener.localAddress().getPort());
            Loopback.Side side = Loopback.Side.on(active, 1, 64, 4);
            try {
                active.connect(ConnectionParameters.defaults());
                CmEvent request = expect(server, CmEventType.CONNECT_REQUEST);
                byte[] why = "go away".getBytes(StandardCharsets.UTF_8);
                request.id().reject(why);
                CmEvent rejected = expect(client, CmEventType.REJECTED);
                assertArrayEquals(why, Arrays.copyOf(rejected.privateData(), why.length));
                assertEquals(28, rejected.status(), "IB_CM_REJ_CONSUMER_DEFINED: rejected by the application");
            } finally {
                side.context().close();
            }
        }
    }

    @Test
    void connectingToAPortWithoutListenerIsRejectedWithoutHanging() {
        try (EventChannel server = EventChannel.create(); EventChannel client = EventChannel.create()) {
            int unusedPort = Loopback.listen(server).localAddress().getPort() + 1000;
            CmId active = Loopback.resolved(client, unusedPort);
            Loopback.Side side = Loopback.Side.on(active, 1, 64, 4);
            try {
                active.connect(ConnectionParameters.defaults());
                CmEvent event = expect(client, CmEventType.REJECTED);
                assertEquals(8, event.status(), "IB_CM_REJ_INVALID_SERVICE_ID: nobody listens on that port");
            } finally {
                side.context().close();
            }
        }
    }

    @Test
    void anAddressWithoutRouteFailsClearly() {
        try (EventChannel client = EventChannel.create()) {
            CmId id = client.createId(PortSpace.TCP);
            // TEST-NET-1: the VM has no route there, so nothing is sent anywhere
            InetSocketAddress nowhere = new InetSocketAddress("192.0.2.1", 7471);
            RdmaException e = assertThrows(RdmaException.class,
                () -> id.resolveAddress(null, nowhere, Duration.ofSeconds(2)));
            assertEquals("rdma_resolve_addr", e.function());
            assertEquals("ENETUNREACH", e.errnoName());
            assertEquals("rdma_resolve_addr failed: ENETUNREACH (101): Network is unreachable [/192.0.2.1:7471]",
                e.getMessage());
            assertFalse(client.awaitEvent(Duration.ofMillis(200)), "a failed call raises no event as well");
        }
    }

    @Test
    void aNeighbourThatNeverAnswersGivesAddrError() throws Exception {
        // a veth whose peer stays down: ARP requests for 10.9.0.2 get no answer, and never leave the VM
        Ip.run("link", "add", "veth-a", "type", "veth", "peer", "name", "veth-b");
        try (EventChannel client = EventChannel.create()) {
            Ip.run("addr", "add", "10.9.0.1/24", "dev", "veth-a");
            Ip.run("link", "set", "veth-a", "up");
            CmId id = client.createId(PortSpace.TCP);
            id.resolveAddress(null, new InetSocketAddress("10.9.0.2", 7471), Duration.ofSeconds(2));
            CmEvent error = expect(client, CmEventType.ADDR_ERROR);
            assertSame(id, error.id());
            assertEquals(-Layout.ETIMEDOUT, error.status(), "address resolution timed out");
        } finally {
            Ip.run("link", "del", "veth-a");
        }
    }

    @Test
    void migrateMovesAnIdAndItsPendingEventToAnotherChannel() {
        try (EventChannel first = EventChannel.create(); EventChannel second = EventChannel.create()) {
            CmId listener = Loopback.listen(first);
            CmId id = first.createId(PortSpace.TCP);
            id.resolveAddress(null, new InetSocketAddress(Loopback.ADDRESS, listener.localAddress().getPort()),
                TIMEOUT);
            assertTrue(first.awaitEvent(TIMEOUT), "ADDR_RESOLVED pending on the first channel");
            id.migrate(second);
            assertSame(second, id.eventChannel());
            assertEquals(1, first.idCount(), "only the listener is left on the first channel");
            assertEquals(1, second.idCount());
            assertFalse(first.awaitEvent(Duration.ofMillis(300)), "the pending event left with the id");
            CmEvent moved = expect(second, CmEventType.ADDR_RESOLVED);
            assertSame(id, moved.id());
            first.close();
            assertFalse(id.isClosed(), "closing the old channel does not close a migrated id");
            assertTrue(listener.isClosed());
            second.close();
            assertTrue(id.isClosed());
        }
    }

    @Test
    void separateChannelsSteerEachConnectionsEventsToItsOwnThread() throws Exception {
        try (Loopback a = Loopback.connect(2, 64); Loopback b = Loopback.connect(2, 64)) {
            Map<String, Set<Integer>> qpsSeenByThread = new ConcurrentHashMap<>();
            Map<String, Set<Object>> cmIdsSeenByThread = new ConcurrentHashMap<>();
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            Thread[] readers = new Thread[2];
            Loopback[] links = {a, b};
            for (int i = 0; i < 2; i++) {
                Loopback link = links[i];
                link.server.cq().requestNotify(false);
                readers[i] = new Thread(() -> {
                    try {
                        readOwnEvents(link, qpsSeenByThread, cmIdsSeenByThread);
                    } catch (Throwable t) {
                        failures.add(t);
                    }
                }, "reader-" + i);
                readers[i].start();
            }
            for (Loopback link : links) {
                link.sendAndAwait(8, 1);
            }
            for (Loopback link : links) {
                link.client.id().disconnect();
                expect(link.clientEvents, CmEventType.DISCONNECTED);
            }
            for (Thread reader : readers) {
                reader.join(TIMEOUT.toMillis());
                assertFalse(reader.isAlive());
            }
            assertTrue(failures.isEmpty(), () -> "reader threads failed: " + failures);
            assertEquals(Set.of(a.server.id().queuePair().qpNumber()), qpsSeenByThread.get("reader-0"));
            assertEquals(Set.of(b.server.id().queuePair().qpNumber()), qpsSeenByThread.get("reader-1"));
            assertEquals(Set.of(a.server.id()), cmIdsSeenByThread.get("reader-0"));
            assertEquals(Set.of(b.server.id()), cmIdsSeenByThread.get("reader-1"));
        }
    }

    /** One reader thread: its connection's receive completion, then its DISCONNECTED, answered. */
    private static void readOwnEvents(Loopback link, Map<String, Set<Integer>> qpsSeenByThread,
                                      Map<String, Set<Object>> cmIdsSeenByThread) {
        String me = Thread.currentThread().getName();
        assertTrue(link.server.channel().awaitEvent(TIMEOUT));
        link.server.channel().getCqEvent();
        link.server.cq().ackEvents();
        for (WorkCompletion wc : link.server.cq().poll(4)) {
            qpsSeenByThread.computeIfAbsent(me, k -> ConcurrentHashMap.newKeySet()).add(wc.qpNumber());
        }
        CmEvent event = expect(link.serverEvents, CmEventType.DISCONNECTED);
        cmIdsSeenByThread.computeIfAbsent(me, k -> ConcurrentHashMap.newKeySet()).add(event.id());
        event.id().disconnect();
    }
}
