package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.InboundConnection;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.RemoteAccess;
import org.rdmaconnector.connector.RemoteRegion;
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.verbs.PolledCompletion;
import org.rdmaconnector.verbs.jna.Layout;

/**
 * The accepted connections' state machine on the host, driven with CM event and completion sequences over stand-in
 * wires: the decision before any allocation, the limits, the one disconnect answer, the drain and its deadline, the
 * races fixed by hand before (accept vs the first receive, DEVICE_REMOVAL after DISCONNECTED, stop vs requests).
 */
class InboundConnectionsTest {
    private static final int BUFFERS = 4;

    private final Recording deliveries = new Recording();
    private final ManualScheduler scheduler = new ManualScheduler();
    private final AtomicLong now = new AtomicLong();

    private InboundConnections connections(String policy, String peers, int max, int perPeer) {
        return connections(policy, peers, max, perPeer, 0);
    }

    private InboundConnections connections(String policy, String peers, int max, int perPeer, int idleSeconds) {
        return connections(ListenerSettings.builder().acceptPolicy(policy).allowedPeers(peers).maxConnections(max)
            .maxConnectionsPerPeer(perPeer).idleTimeoutSeconds(idleSeconds));
    }

    private InboundConnections connections(ListenerSettings.Builder builder) {
        ListenerSettings settings = builder.address("10.0.0.1").port(7471).receiveBufferCount(BUFFERS)
            .receiveBufferSize(64).maxConcurrentDeliveries(1).build();
        return new InboundConnections(settings, new ConnectRequestDecision(settings), deliveries,
            scheduler, now::get);
    }

    private InboundConnections connections(String policy) {
        return connections(policy, null, 8, 8);
    }

    @Test
    void underAcceptTheQueuePairIsSetUpAndTheConnectionCanSendBeforeRdmaAcceptReturns() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        // the first receive is delivered (on the completion thread) while rdma_accept is still running
        wire.duringAccept = () -> {
            wire.receive("ping");
            assertEquals("ACCEPTING", ((AcceptedConnection) deliveries.lastConnection()).state().name());
        };
        deliveries.onCompletion = completion -> completion.connection().send("pong".getBytes(StandardCharsets.UTF_8));
        table.onConnectRequest(wire, wire, null);
        assertEquals(List.of("allocate", "accept", "send pong", "repost"), wire.calls);
        assertEquals(1, table.size());
        assertEquals(List.of("receive 1 ping", "CONNECT_REQUEST accepted"), deliveries.seen);
    }

    @Test
    void underRejectNothingIsAllocatedAndThePeerLearnsWhy() {
        InboundConnections table = connections("reject");
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        assertEquals(List.of("reject rejected: not accepted", "destroy"), wire.calls);
        assertEquals(0, table.size());
        assertEquals(0, table.decision().admitted());
        assertEquals(1L, table.decision().rejections().get(ConnectRequestDecision.Reason.NOT_ACCEPTED));
    }

    @Test
    void anEndpointThatDecidesSeesTheRequestBeforeAnythingIsAllocated() {
        InboundConnections table = connections("endpoint-decides");
        FakeWire rejected = new FakeWire("10.0.0.2");
        FakeWire accepted = new FakeWire("10.0.0.3");
        deliveries.onEvent = event -> {
            FakeWire wire = event.connection().peerAddress().equals(rejected.peer) ? rejected : accepted;
            assertEquals(List.of(), wire.calls, "nothing allocated before the decision");
            if (wire == rejected) {
                event.reject("busy".getBytes(StandardCharsets.UTF_8));
            } else {
                event.accept();
            }
        };
        table.onConnectRequest(rejected, rejected, null);
        assertEquals(List.of("reject busy", "destroy"), rejected.calls);
        table.onConnectRequest(accepted, accepted, null);
        assertEquals(List.of("allocate", "accept"), accepted.calls);
        assertEquals(1, table.size());
    }

    @Test
    void aRequestNobodyDecidesIsRejectedWithoutAQueuePair() {
        InboundConnections table = connections("endpoint-decides");
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        assertEquals(List.of("reject no endpoint accepted the request", "destroy"), wire.calls);
    }

    @Test
    void aPeerOutsideTheAllowedPeersIsRejectedBeforeAnything() {
        InboundConnections table = connections("accept", "10.0.1.0/24", 8, 8);
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        assertEquals(List.of("reject rejected: peer not allowed", "destroy"), wire.calls);
        assertEquals(List.of(), deliveries.seen, "a refused request is not delivered");
        assertEquals(1L, table.decision().rejections().get(ConnectRequestDecision.Reason.PEER_NOT_ALLOWED));
    }

    @Test
    void theLimitsPerListenerAndPerPeerHoldAndASlotIsFreedWithItsConnection() {
        InboundConnections table = connections("accept", null, 3, 2);
        List<FakeWire> a = List.of(new FakeWire("10.0.0.2"), new FakeWire("10.0.0.2"), new FakeWire("10.0.0.2"));
        a.forEach(w -> table.onConnectRequest(w, w, null));
        assertEquals("reject rejected: too many connections from this peer", a.get(2).calls.get(0));
        FakeWire b = new FakeWire("10.0.0.3");
        table.onConnectRequest(b, b, null);
        FakeWire c = new FakeWire("10.0.0.4");
        table.onConnectRequest(c, c, null);
        assertEquals("reject rejected: listener full", c.calls.get(0));
        assertEquals(3, table.size());

        table.onCmEvent(b, CmEventType.DISCONNECTED, 0, null);
        b.flushAll(); // its receives flush: destroyed
        FakeWire d = new FakeWire("10.0.0.4");
        table.onConnectRequest(d, d, null);
        assertEquals(List.of("allocate", "accept"), d.calls);
        Map<ConnectRequestDecision.Reason, Long> rejections = table.decision().rejections();
        assertEquals(1L, rejections.get(ConnectRequestDecision.Reason.MAX_CONNECTIONS));
        assertEquals(1L, rejections.get(ConnectRequestDecision.Reason.MAX_CONNECTIONS_PER_PEER));
    }

    @Test
    void concurrentRequestsNeverPassTheLimits() throws Exception {
        InboundConnections table = connections("accept", null, 10, 4);
        ExecutorService threads = Executors.newFixedThreadPool(8);
        AtomicInteger peak = new AtomicInteger();
        deliveries.onEvent = event -> peak.accumulateAndGet(table.size(), Math::max);
        CountDownLatch start = new CountDownLatch(1);
        List<FakeWire> wires = Collections.synchronizedList(new ArrayList<>());
        try {
            for (int i = 0; i < 200; i++) {
                FakeWire wire = new FakeWire("10.0.0." + (2 + i % 5));
                wires.add(wire);
                threads.execute(() -> {
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    table.onConnectRequest(wire, wire, null);
                });
            }
            start.countDown();
        } finally {
            threads.shutdown();
            assertTrue(threads.awaitTermination(30, TimeUnit.SECONDS));
        }
        assertEquals(10, table.size());
        assertTrue(peak.get() <= 10, "peak " + peak);
        for (int peer = 2; peer <= 6; peer++) {
            String address = "10.0.0." + peer;
            long held = wires.stream().filter(w -> w.peer.getAddress().getHostAddress().equals(address))
                .filter(w -> w.calls.contains("accept")).count();
            assertTrue(held <= 4, held + " connections from " + address);
        }
        assertEquals(190, wires.stream().filter(w -> w.calls.get(0).startsWith("reject")).count());
    }

    @Test
    void thePeersDisconnectIsAnsweredOnceAndTheConnectionIsDestroyedWithItsLastFlush() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        table.onCmEvent(wire, CmEventType.ESTABLISHED, 0, null);
        InboundConnection connection = deliveries.lastConnection();
        assertTrue(connection.isConnected());

        table.onCmEvent(wire, CmEventType.DISCONNECTED, 0, null);
        connection.disconnect(); // an endpoint's own disconnect meanwhile: no second rdma_disconnect
        assertEquals(1, wire.calls.stream().filter("disconnect"::equals).count());
        assertEquals(List.of(AcceptedConnection.DRAIN_DEADLINE, AcceptedConnection.FLUSH_GRACE),
            scheduler.tasks.stream().map(t -> t.delay).toList(), "the deadline, shortened once DISCONNECTED is in");
        assertTrue(scheduler.tasks.get(0).cancelled);
        assertFalse(wire.calls.contains("destroy"));
        assertEquals(1, table.size());

        wire.flushAll();
        assertTrue(wire.calls.contains("destroy"));
        assertEquals(0, table.size());
        assertEquals(0, table.decision().admitted());
        ManualScheduler.TaskView deadline = scheduler.tasks.get(1);
        assertTrue(deadline.cancelled, "the deadline is cancelled by the destruction");
        deadline.task.run(); // a timer that runs a cancelled task anyway: nothing happens, nothing is held
        assertEquals(1, wire.calls.stream().filter("destroy"::equals).count());
        assertEquals(List.of("CONNECT_REQUEST accepted", "ESTABLISHED", "DISCONNECTED"), deliveries.seen,
            "flushed receives are not messages");
    }

    @Test
    void aReceiveThatNeverFlushesAfterDisconnectedHoldsTheConnectionOnlyForTheGrace() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        table.onCmEvent(wire, CmEventType.DISCONNECTED, 0, null);
        ManualScheduler.TaskView grace = scheduler.tasks.get(scheduler.tasks.size() - 1);
        assertEquals(AcceptedConnection.FLUSH_GRACE, grace.delay);
        grace.task.run();
        assertTrue(wire.calls.contains("destroy"));
        assertEquals(0, table.size());
    }

    @Test
    void aDisconnectThatTheCmNeverConfirmsEndsAtTheDrainDeadline() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        deliveries.lastConnection().disconnect();
        wire.flushAll();
        assertEquals(List.of(AcceptedConnection.DRAIN_DEADLINE), scheduler.tasks.stream().map(t -> t.delay).toList());
        assertFalse(wire.calls.contains("destroy"), "waiting for DISCONNECTED");
        scheduler.tasks.get(0).task.run();
        assertTrue(wire.calls.contains("destroy"));
        assertEquals(0, table.size());
        assertEquals(List.of("CONNECT_REQUEST accepted", "DISCONNECTED"), deliveries.seen,
            "the endpoint learns of the end though the CM never said it");
        assertEquals(-Layout.ETIMEDOUT, deliveries.lastStatus);
    }

    @Test
    void aDeviceRemovalAfterTheConnectionWasDestroyedIsLeftToTheListener() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        wire.posted.set(0); // nothing posted: DISCONNECTED destroys at once
        wire.receivesOnAllocate = false;
        table.onConnectRequest(wire, wire, null);
        table.onCmEvent(wire, CmEventType.DISCONNECTED, 0, null);
        assertEquals(0, table.size());
        assertFalse(table.onCmEvent(wire, CmEventType.DEVICE_REMOVAL, 0, null));
    }

    @Test
    void aDeviceRemovalOfALiveConnectionIsDeliveredAndDestroysIt() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        assertTrue(table.onCmEvent(wire, CmEventType.DEVICE_REMOVAL, 0, null));
        assertTrue(wire.calls.contains("destroy"));
        assertEquals(List.of("CONNECT_REQUEST accepted", "DEVICE_REMOVAL"), deliveries.seen);
    }

    @Test
    void aReceiveIsRepostedOnlyOnceItIsDelivered() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        deliveries.onCompletion = completion -> assertFalse(wire.calls.contains("repost"),
            "reposted before the endpoint had the message");
        wire.receive("one");
        assertEquals("repost", wire.calls.get(wire.calls.size() - 1));
    }

    @Test
    void aReceiveHeldByAPausedEndpointIsRepostedOnlyWhenItIsDeliveredAndKeepsTheConnectionFromIdling() {
        InboundConnections table = connections("accept", null, 8, 8, 10);
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        deliveries.holding = true;
        for (int i = 1; i <= BUFFERS; i++) {
            wire.receive("m" + i);
        }
        assertFalse(wire.calls.contains("repost"), "no receive is posted again while the endpoint holds them: the "
            + "peer meets receiver-not-ready");
        assertEquals(0, wire.outstanding(), "every receive buffer is used");
        now.addAndGet(TimeUnit.SECONDS.toNanos(60)); // far past the idle timeout
        runSweeps();
        assertFalse(wire.calls.contains("disconnect"), "a connection with deliveries held is not taken for dead");
        deliveries.deliverHeld();
        assertEquals(List.of("CONNECT_REQUEST accepted", "receive 1 m1", "receive 2 m2", "receive 3 m3",
            "receive 4 m4"), deliveries.seen, "delivered in order on resume");
        assertEquals(BUFFERS, wire.calls.stream().filter("repost"::equals).count());
        assertEquals(BUFFERS, wire.outstanding(), "every buffer posted again once delivered");
        assertEquals(1, table.size(), "the connection stayed open");
        now.addAndGet(TimeUnit.SECONDS.toNanos(60));
        runSweeps();
        assertTrue(wire.calls.contains("disconnect"), "with nothing held the liveness rule applies again");
    }

    @Test
    void aHeldMessageIsReadInItsSlotAfterItsConnectionEndedAndTheSlotIsThenFreedNotPosted() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        deliveries.holding = true;
        wire.receive("kept in its slot");
        assertEquals(1, wire.inSlots.size(), "the message's bytes stay in its receive slot while it is held");
        table.onCmEvent(wire, CmEventType.DISCONNECTED, 0, null);
        wire.flushAll();
        assertTrue(wire.calls.contains("destroy"));
        List<MessageCompletion> given = new CopyOnWriteArrayList<>();
        deliveries.onCompletion = completion -> given.add(KeptCompletion.of(completion));
        deliveries.deliverHeld();
        assertEquals(List.of("CONNECT_REQUEST accepted", "receive 1 kept in its slot", "DISCONNECTED"),
            deliveries.seen, "the endpoint reads the message after its connection was destroyed");
        assertTrue(wire.calls.contains("release") && !wire.calls.contains("repost"), wire.calls.toString());
        assertTrue(wire.inSlots.isEmpty(), "the slot is freed once the delivery is through");
        assertEquals("kept in its slot", new String(given.get(0).data(), StandardCharsets.UTF_8),
            "read in its slot during its delivery");
    }

    @Test
    void aDeliveryCallThatThrowsStillEndsTheDeliveryAndPostsTheReceiveAgain() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        deliveries.onCompletion = completion -> {
            throw new IllegalStateException("the deliveries broke");
        };
        assertThrows(IllegalStateException.class, () -> wire.receive("one"));
        assertEquals("repost", wire.calls.get(wire.calls.size() - 1));
        assertTrue(wire.inSlots.isEmpty(), "the slot is not left lent");
        assertEquals(BUFFERS, wire.outstanding(), "every receive posted again");
    }

    private void runSweeps() {
        for (ManualScheduler.TaskView task : List.copyOf(scheduler.tasks)) {
            if (!task.cancelled) {
                scheduler.tasks.remove(task);
                task.task.run();
            }
        }
    }

    @Test
    void aDisconnectHeldByAPausedEndpointFreesTheResourcesButKeepsTheSlotUntilItIsDelivered() {
        InboundConnections table = connections("accept", null, 1, 1);
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        deliveries.holding = true;
        table.onCmEvent(wire, CmEventType.DISCONNECTED, 0, null);
        wire.flushAll();
        assertTrue(wire.calls.contains("destroy"), "the id, queue pair and memory go once flushed, held or not");
        assertEquals(1, table.size(), "the slot stays taken while its events are held: a paused endpoint holds "
            + "the events of at most MaxConnections connections");
        FakeWire next = new FakeWire("10.0.0.3");
        table.onConnectRequest(next, next, null);
        assertEquals(List.of("reject rejected: listener full", "destroy"), next.calls, "MaxConnections 1");
        assertEquals(List.of("CONNECT_REQUEST accepted"), deliveries.seen);
        deliveries.deliverHeld();
        assertEquals(List.of("CONNECT_REQUEST accepted", "DISCONNECTED"), deliveries.seen, "the endpoint still "
            + "learns of it when it resumes");
        assertEquals(0, table.size(), "the slot is free once what was held is delivered");
    }

    @Test
    void requestsAPausedDeciderHoldsAreRejectedButKeepTheirSlotsSoTheHeldAreBounded() {
        InboundConnections table = connections("endpoint-decides", null, 2, 2);
        deliveries.holding = true;
        for (int i = 0; i < 3; i++) {
            FakeWire wire = new FakeWire("10.0.0." + (2 + i));
            table.onConnectRequest(wire, wire, null);
        }
        assertEquals(2, deliveries.held.size(), "the third was refused before anything was held: listener full");
        assertEquals(2, table.size());
        deliveries.deliverHeld();
        assertEquals(0, table.size());
    }

    @Test
    void aWriteWithImmediateIsDeliveredAsAReceiveWithItsImmediateDataAndItsReceiveIsPostedAgain() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        List<MessageCompletion> given = new CopyOnWriteArrayList<>();
        deliveries.onCompletion = completion -> given.add(KeptCompletion.of(completion));
        for (int i = 1; i <= 2 * BUFFERS; i++) { // more than the receives posted: each is posted again
            wire.writeWithImmediate(i == 1 ? 0 : 4096, 0xCAFE0000 + i);
        }
        assertEquals(2 * BUFFERS, given.size());
        MessageCompletion first = given.get(0);
        assertTrue(first.isReceive() && first.isSuccess() && first.workCompletion().hasImmediate(), first.toString());
        assertEquals(0xCAFE0001, first.workCompletion().immediateData());
        assertEquals(0, first.data().length, "no bytes: they are in the written region");
        assertEquals(2 * BUFFERS, wire.calls.stream().filter("repost"::equals).count());
        assertEquals(BUFFERS, wire.outstanding(), "every receive a write took is posted again");
        assertFalse(wire.calls.contains("disconnect"));
    }

    @Test
    void aFailedRdmaWriteEndsTheConnectionAndIsDeliveredWithItsStatus() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        InboundConnection connection = deliveries.lastConnection();
        RemoteRegion peers = new RemoteRegion(0x1000, 64, 5, Set.of(RemoteAccess.WRITE, RemoteAccess.READ));
        StandInRegion local = new StandInRegion(64);
        WorkRequest write = connection.write(local, 0, 64, peers, 0);
        assertEquals(WorkRequest.Kind.RDMA_WRITE, write.kind());
        assertEquals(WorkRequest.Kind.RDMA_READ, connection.read(local, 0, 8, peers, 8).kind());
        assertThrows(IllegalArgumentException.class, () -> connection.write(local, 0, 65, peers, 0),
            "checked before the wire is asked");
        assertEquals(List.of("allocate", "accept", "post WRITE", "post READ"), wire.calls);
        wire.complete(WcOpcode.RDMA_WRITE, Layout.IBV_WC_REM_ACCESS_ERR, new byte[0]);
        assertTrue(wire.calls.contains("disconnect"), "the failed write ended the connection");
        assertEquals("send 1 failed", deliveries.seen.get(deliveries.seen.size() - 1));
        assertEquals(Layout.IBV_WC_REM_ACCESS_ERR, write.result().status());
        assertThrows(IllegalStateException.class, () -> connection.writeWithImmediate(local, 0, 0, peers, 0, 1),
            "nothing is posted on a connection that is over");
        wire.flushAll();
        table.onCmEvent(wire, CmEventType.DISCONNECTED, 0, null);
        assertTrue(wire.calls.contains("destroy"));
    }

    @Test
    void withoutSendCompletionsASuccessfulOneOnlyCompletesItsRequestAndCountsAsActivityAndAFailedOneIsDelivered() {
        InboundConnections table = connections(ListenerSettings.builder().idleTimeoutSeconds(60)
            .deliverSendCompletions(false));
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        table.onCmEvent(wire, CmEventType.ESTABLISHED, 0, null);
        InboundConnection connection = deliveries.lastConnection();
        RemoteRegion peers = new RemoteRegion(0x1000, 64, 5, Set.of(RemoteAccess.WRITE, RemoteAccess.READ));
        StandInRegion local = new StandInRegion(64);
        WorkRequest write = connection.write(local, 0, 64, peers, 0);
        now.addAndGet(TimeUnit.SECONDS.toNanos(50));
        wire.complete(WcOpcode.RDMA_WRITE, Layout.IBV_WC_SUCCESS, new byte[0]);
        assertTrue(write.isDone() && write.result().isSuccess(), "its awaiter gets it");
        wire.receive("a message");
        assertEquals(List.of("CONNECT_REQUEST accepted", "ESTABLISHED", "receive 1 a message"), deliveries.seen,
            "the write's completion reaches no endpoint; the message does");

        WorkRequest read = connection.read(local, 0, 8, peers, 8);
        now.addAndGet(TimeUnit.SECONDS.toNanos(50));
        wire.complete(WcOpcode.RDMA_READ, Layout.IBV_WC_SUCCESS, new byte[0]);
        now.addAndGet(TimeUnit.SECONDS.toNanos(20)); // 70 s since the message, 20 since the read
        scheduler.tasks.get(0).task.run();
        assertTrue(read.result().isSuccess());
        assertFalse(wire.calls.contains("disconnect"), "the read's completion was activity");

        WorkRequest failing = connection.write(local, 0, 64, peers, 0);
        WorkRequest after = connection.write(local, 0, 64, peers, 0);
        wire.complete(WcOpcode.RDMA_WRITE, Layout.IBV_WC_REM_ACCESS_ERR, new byte[0]);
        assertTrue(wire.calls.contains("disconnect"), "the failed write ended the connection");
        assertEquals("send 1 failed", deliveries.seen.get(deliveries.seen.size() - 1), "and is delivered");
        assertEquals(Layout.IBV_WC_REM_ACCESS_ERR, failing.result().status());
        table.onCmEvent(wire, CmEventType.DISCONNECTED, 0, null);
        wire.complete(WcOpcode.RDMA_WRITE, Layout.IBV_WC_SUCCESS, new byte[0]);
        assertTrue(after.result().isSuccess());
        assertTrue(deliveries.seen.get(deliveries.seen.size() - 1).startsWith("send 2"), "a closing connection's "
            + "completions are delivered, each delivery looking whether the connection is over: " + deliveries.seen);
        wire.flushAll();
        assertTrue(wire.calls.contains("destroy"));
    }

    @Test
    void aFailedReceiveDisconnectsAndIsDeliveredAsAFailure() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        wire.complete(WcOpcode.RECV, Layout.IBV_WC_SUCCESS + 1, new byte[0]); // IBV_WC_LOC_LEN_ERR: too long
        assertTrue(wire.calls.contains("disconnect"));
        assertFalse(wire.calls.contains("repost"));
        assertTrue(deliveries.seen.get(deliveries.seen.size() - 1).startsWith("receive 1 failed"));
        wire.flushAll();
        assertFalse(wire.calls.contains("destroy"), "destroyed only once its DISCONNECTED is delivered");
        table.onCmEvent(wire, CmEventType.DISCONNECTED, 0, null);
        assertTrue(wire.calls.contains("destroy"));
        assertEquals("DISCONNECTED", deliveries.seen.get(deliveries.seen.size() - 1));
    }

    @Test
    void ourOwnDisconnectDeliversDisconnectedBeforeTheConnectionIsDestroyed() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        table.onCmEvent(wire, CmEventType.ESTABLISHED, 0, null);
        deliveries.lastConnection().disconnect();
        wire.flushAll(); // the queue pair is in ERROR at once
        assertFalse(wire.calls.contains("destroy"), "the endpoints have not seen DISCONNECTED yet");
        table.onCmEvent(wire, CmEventType.DISCONNECTED, 0, null); // the peer's DREP
        assertTrue(wire.calls.contains("destroy"));
        assertEquals(List.of("CONNECT_REQUEST accepted", "ESTABLISHED", "DISCONNECTED"), deliveries.seen);
    }

    @Test
    void aConnectionIdleForTheTimeoutIsTakenForDeadAndItsEndpointsLearnWhy() {
        InboundConnections table = connections("accept", null, 8, 8, 60);
        FakeWire quiet = new FakeWire("10.0.0.2");
        FakeWire busy = new FakeWire("10.0.0.3");
        table.onConnectRequest(quiet, quiet, null);
        table.onConnectRequest(busy, busy, null);
        assertEquals(1, scheduler.tasks.size(), "one liveness check while connections are held");
        assertEquals(Duration.ofSeconds(15), scheduler.tasks.get(0).delay);

        now.addAndGet(TimeUnit.SECONDS.toNanos(30));
        busy.receive("still here");
        now.addAndGet(TimeUnit.SECONDS.toNanos(31)); // quiet: 61 s without traffic; busy: 31 s
        scheduler.tasks.get(0).task.run();
        assertTrue(quiet.calls.contains("disconnect"));
        assertFalse(busy.calls.contains("disconnect"));
        assertEquals(2, scheduler.tasks.stream().filter(t -> t.delay.equals(Duration.ofSeconds(15))).count(),
            "the check comes again");

        // the peer is dead: no DREP; the CM's DREQ times out and it reports DISCONNECTED
        table.onCmEvent(quiet, CmEventType.DISCONNECTED, 0, null);
        assertEquals(-Layout.ETIMEDOUT, deliveries.lastStatus);
        quiet.flushAll();
        assertTrue(quiet.calls.contains("destroy"));
        assertEquals(1, table.size());
    }

    /** A connection of {@code table} (idle timeout 60 s) left without traffic for 61 s, and the liveness check run. */
    private FakeWire takenForDead(InboundConnections table) {
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        now.addAndGet(TimeUnit.SECONDS.toNanos(61));
        scheduler.tasks.get(0).task.run();
        return wire;
    }

    @Test
    void aConnectionTakenForDeadWaitsForAnAnswerOnlyBrieflyOnceItsRequestsHaveFlushed() {
        InboundConnections table = connections("accept", null, 8, 8, 60);
        FakeWire quiet = takenForDead(table);
        assertTrue(quiet.calls.contains("disconnect"));
        assertEquals(1, scheduler.waiting(AcceptedConnection.DRAIN_DEADLINE).size(), "its receives are still posted");
        assertEquals(List.of(), scheduler.waiting(AcceptedConnection.ANSWER_WAIT));

        quiet.flushAll(); // the queue pair went to ERROR with the disconnect
        assertEquals(List.of(), scheduler.waiting(AcceptedConnection.DRAIN_DEADLINE));
        ManualScheduler.TaskView answer = scheduler.waiting(AcceptedConnection.ANSWER_WAIT).get(0);
        quiet.flushAll();
        assertEquals(1, scheduler.tasks.stream().filter(t -> t.delay.equals(AcceptedConnection.ANSWER_WAIT))
            .count(), "flushed: the wait for the DREP is short, and set once");
        assertFalse(quiet.calls.contains("destroy"));
        assertEquals(1, table.size());

        answer.task.run(); // no DREP: the peer is gone
        assertTrue(quiet.calls.contains("destroy"));
        assertEquals(0, table.size());
        assertEquals("DISCONNECTED", deliveries.seen.get(deliveries.seen.size() - 1));
        assertEquals(-Layout.ETIMEDOUT, deliveries.lastStatus);
        assertFalse(table.onCmEvent(quiet, CmEventType.DISCONNECTED, 0, null),
            "the CM's own DISCONNECTED, a minute later, finds nothing");
        assertEquals(1, deliveries.seen.stream().filter("DISCONNECTED"::equals).count());
    }

    @Test
    void theCmsDisconnectedArrivingAsTheDeadlineDeliversItsOwnIsNotDeliveredTwice() {
        InboundConnections table = connections("accept", null, 8, 8, 60);
        FakeWire late = takenForDead(table);
        late.flushAll();
        deliveries.onEvent = event -> {
            if (event.type() == CmEventType.DISCONNECTED) {
                deliveries.onEvent = e -> { };
                table.onCmEvent(late, CmEventType.DISCONNECTED, 0, null); // the CM's own, on its thread
            }
        };
        scheduler.waiting(AcceptedConnection.ANSWER_WAIT).get(0).task.run();
        assertTrue(late.calls.contains("destroy"));
        assertEquals(1, deliveries.seen.stream().filter("DISCONNECTED"::equals).count(), deliveries.seen.toString());
        assertEquals(0, table.size());
    }

    @Test
    void aPeerTakenForDeadThatAnswersIsDestroyedAtItsAnswer() {
        InboundConnections table = connections("accept", null, 8, 8, 60);
        FakeWire slow = takenForDead(table);
        slow.flushAll();
        ManualScheduler.TaskView answer = scheduler.waiting(AcceptedConnection.ANSWER_WAIT).get(0);
        table.onCmEvent(slow, CmEventType.DISCONNECTED, 0, null); // its DREP
        assertTrue(slow.calls.contains("destroy"));
        assertTrue(answer.cancelled);
        assertEquals(-Layout.ETIMEDOUT, deliveries.lastStatus, "taken for dead by the liveness rule all the same");
    }

    @Test
    void aSendWhoseRetriesWereUsedUpTakesThePeerForDead() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        table.onCmEvent(wire, CmEventType.ESTABLISHED, 0, null);
        WorkRequest send = deliveries.lastConnection().send("anyone?".getBytes(StandardCharsets.UTF_8));
        wire.complete(WcOpcode.SEND, Layout.IBV_WC_RETRY_EXC_ERR, new byte[0]);
        assertEquals(Layout.IBV_WC_RETRY_EXC_ERR, send.result().status());
        assertTrue(wire.calls.contains("disconnect"));
        wire.flushAll();
        scheduler.waiting(AcceptedConnection.ANSWER_WAIT).get(0).task.run();
        assertTrue(wire.calls.contains("destroy"));
        assertEquals(0, table.size());
    }

    @Test
    void aConnectionWhoseDeliveryIsStillRunningIsNotIdle() throws Exception {
        InboundConnections table = connections("accept", null, 8, 8, 60);
        FakeWire wire = new FakeWire("10.0.0.2");
        table.onConnectRequest(wire, wire, null);
        CountDownLatch inDelivery = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        deliveries.onCompletion = completion -> {
            inDelivery.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        Thread slow = new Thread(() -> wire.receive("slow"));
        slow.start();
        assertTrue(inDelivery.await(10, TimeUnit.SECONDS));
        now.addAndGet(TimeUnit.SECONDS.toNanos(600));
        scheduler.tasks.get(0).task.run();
        release.countDown();
        slow.join(10_000);
        assertFalse(wire.calls.contains("disconnect"), "a slow endpoint is not a dead peer");
    }

    @Test
    void afterCloseNothingIsSetUpAndEveryRequestIsRejected() {
        InboundConnections table = connections("accept");
        FakeWire live = new FakeWire("10.0.0.2");
        table.onConnectRequest(live, live, null);
        assertEquals(1, table.close(Duration.ZERO), "a connection that did not disconnect in time is destroyed");
        assertTrue(live.calls.contains("destroy"));
        FakeWire late = new FakeWire("10.0.0.3");
        table.onConnectRequest(late, late, null);
        assertEquals(List.of("reject rejected: no resources", "destroy"), late.calls);
        assertEquals(0, table.size());
    }

    @Test
    void aFailedSetUpRejectsTheRequestAndFreesItsSlot() {
        InboundConnections table = connections("accept");
        FakeWire wire = new FakeWire("10.0.0.2");
        wire.allocateFails = true;
        table.onConnectRequest(wire, wire, null);
        assertEquals(List.of("allocate failed", "reject rejected: no resources", "destroy"), wire.calls);
        assertEquals(0, table.decision().admitted());
        assertEquals(1L, table.decision().rejections().get(ConnectRequestDecision.Reason.NO_RESOURCES));
    }

    @Test
    void sendingBeforeTheDecisionOrAfterTheDisconnectIsRefused() {
        InboundConnections table = connections("endpoint-decides");
        FakeWire wire = new FakeWire("10.0.0.2");
        deliveries.onEvent = event -> {
            if (event.isDecisionPending()) {
                IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> event.connection().send(new byte[1]));
                assertTrue(e.getMessage().endsWith("is not established (REQUESTED)"), e.getMessage());
                event.accept();
            }
        };
        table.onConnectRequest(wire, wire, null);
        table.onCmEvent(wire, CmEventType.DISCONNECTED, 0, null);
        assertThrows(IllegalStateException.class, () -> deliveries.lastConnection().send(new byte[1]));
    }

    /** Records what the connections deliver, as short strings. */
    private static final class Recording implements Deliveries {
        final List<String> seen = new CopyOnWriteArrayList<>();
        volatile Consumer<ConnectionEvent> onEvent = event -> { };
        volatile Consumer<MessageCompletion> onCompletion = completion -> { };
        volatile InboundConnection last;
        volatile int lastStatus;
        // as a paused endpoint: what it is given is kept, and its connection told only by deliverHeld()
        volatile boolean holding;
        final List<Runnable> held = new CopyOnWriteArrayList<>();

        @Override
        public void deliver(ConnectionEvent event, Done done) {
            last = event.connection();
            lastStatus = event.status();
            if (take(() -> {
                onEvent.accept(event);
                seen.add(event.type() + (event.type() == CmEventType.CONNECT_REQUEST
                    ? (event.isAccepted() ? " accepted" : " rejected") : ""));
            }, done)) {
                done.run();
            }
        }

        @Override
        public void deliver(MessageCompletion completion, Done done) {
            last = completion.connection();
            if (take(() -> {
                onCompletion.accept(completion);
                seen.add((completion.isReceive() ? "receive " : "send ") + completion.sequence() + " "
                    + (completion.isSuccess() ? new String(completion.data(), StandardCharsets.UTF_8) : "failed"));
            }, done)) {
                done.run();
            }
        }

        /** Delivers now (true), or holds the delivery and its done (false). */
        private boolean take(Runnable delivery, Done done) {
            if (holding) {
                held.add(() -> {
                    delivery.run();
                    done.run();
                });
                return false;
            }
            delivery.run();
            return true;
        }

        /** As a resumed endpoint: delivers what it held, in order. */
        void deliverHeld() {
            holding = false;
            List<Runnable> all = List.copyOf(held);
            held.clear();
            all.forEach(Runnable::run);
        }

        @Override
        public boolean hasDecider() {
            return true;
        }

        InboundConnection lastConnection() {
            return last;
        }
    }

    /** A stand-in for the CM id and queue pair: records calls; posted requests are counted and can be completed. */
    private static final class FakeWire implements ConnectionWire {
        private static final AtomicLong WR_IDS = new AtomicLong();

        final InetSocketAddress peer;
        final List<String> calls = new CopyOnWriteArrayList<>();
        final AtomicInteger posted = new AtomicInteger();
        final Map<Long, PostedRequest> requests = new java.util.concurrent.ConcurrentHashMap<>();
        DeviceQueueSet.QueuePairRoute completions;
        Runnable duringAccept = () -> { };
        boolean allocateFails;
        boolean receivesOnAllocate = true;
        boolean destroyed;

        FakeWire(String peer) {
            this.peer = new InetSocketAddress(peer, 5000);
        }

        @Override
        public InetSocketAddress peerAddress() {
            return peer;
        }

        @Override
        public InetSocketAddress localAddress() {
            return new InetSocketAddress("10.0.0.1", 7471);
        }

        @Override
        public void allocate(DeviceQueueSet.QueuePairRoute handler) {
            if (allocateFails) {
                calls.add("allocate failed");
                throw new IllegalStateException("ibv_reg_mr failed: ENOMEM (12)");
            }
            calls.add("allocate");
            completions = handler;
            if (receivesOnAllocate) {
                for (int i = 0; i < BUFFERS; i++) {
                    post(WorkRequest.Kind.RECEIVE);
                }
            }
        }

        private WorkRequest post(WorkRequest.Kind kind) {
            PostedRequest request = new PostedRequest(WR_IDS.incrementAndGet(), kind);
            requests.put(request.wrId(), request);
            posted.incrementAndGet();
            return request;
        }

        @Override
        public void accept() {
            calls.add("accept");
            duringAccept.run();
        }

        @Override
        public void reject(byte[] privateData) {
            calls.add("reject " + new String(privateData, StandardCharsets.UTF_8));
        }

        @Override
        public void disconnect() {
            calls.add("disconnect");
        }

        @Override
        public WorkRequest send(byte[] message, int offset, int length, boolean signaled) {
            calls.add("send " + new String(message, offset, length, StandardCharsets.UTF_8));
            return post(WorkRequest.Kind.SEND);
        }

        @Override
        public org.rdmaconnector.connector.MemoryRegion register(java.nio.ByteBuffer buffer,
                                                                 java.util.Set<RemoteAccess> remoteAccess) {
            throw new UnsupportedOperationException("no memory on the host");
        }

        @Override
        public WorkRequest post(RdmaOperation operation) {
            calls.add("post " + operation.opcode());
            return post(operation.kind());
        }

        @Override
        public void repostReceive(WorkRequest receive) {
            calls.add("repost");
            inSlots.remove(receive);
            post(WorkRequest.Kind.RECEIVE);
        }

        @Override
        public void releaseReceive(WorkRequest receive) {
            calls.add("release");
            inSlots.remove(receive);
        }

        @Override
        public void readReceived(WorkRequest receive, byte[] destination, int offset, int length) {
            byte[] message = inSlots.get(receive);
            if (message == null) {
                throw new IllegalStateException(receive + " holds no bytes in a receive slot");
            }
            System.arraycopy(message, 0, destination, offset, length);
        }

        @Override
        public PostedRequest complete(PolledCompletion completion) {
            PostedRequest request = requests.remove(completion.wrId());
            if (request == null || destroyed) {
                return null;
            }
            posted.decrementAndGet();
            if (completion.isSuccess() && completion.opcode() == WcOpcode.RECV) {
                inSlots.put(request, bytes); // as the real wire, it leaves a message's bytes in their slot
            }
            request.complete(completion, null);
            return request;
        }

        // the messages whose receive slots are not posted again yet
        final Map<WorkRequest, byte[]> inSlots = new java.util.concurrent.ConcurrentHashMap<>();

        private byte[] bytes;

        /** The CQ gives a completion of the oldest request of that kind. */
        void complete(WcOpcode opcode, int status, byte[] data) {
            bytes = data;
            cq(new WorkCompletion(oldest(opcode), status, opcode, 0, data.length, 0, 1, 0, 0));
        }

        /** The peer's RDMA WRITE with immediate of {@code length} bytes takes the oldest receive. */
        void writeWithImmediate(int length, int immediateData) {
            bytes = null;
            cq(new WorkCompletion(oldest(WcOpcode.RECV_RDMA_WITH_IMM), Layout.IBV_WC_SUCCESS,
                WcOpcode.RECV_RDMA_WITH_IMM, 0, length, immediateData, 1, 0, WorkCompletion.WITH_IMM));
        }

        private long oldest(WcOpcode opcode) {
            WorkRequest.Kind kind = switch (opcode) {
                case RECV, RECV_RDMA_WITH_IMM -> WorkRequest.Kind.RECEIVE;
                case RDMA_WRITE -> WorkRequest.Kind.RDMA_WRITE;
                case RDMA_READ -> WorkRequest.Kind.RDMA_READ;
                default -> WorkRequest.Kind.SEND;
            };
            return requests.values().stream().filter(r -> r.kind() == kind).mapToLong(WorkRequest::wrId).min()
                .orElseThrow();
        }

        /** As DeviceQueueSet does: polled (on the loop), then delivered (in order). */
        void cq(WorkCompletion completion) {
            completions.delivered(completions.polled(PolledCompletion.of(completion)));
        }

        void receive(String message) {
            complete(WcOpcode.RECV, Layout.IBV_WC_SUCCESS, message.getBytes(StandardCharsets.UTF_8));
        }

        /** The queue pair is in ERROR: every posted request completes as flushed. */
        void flushAll() {
            for (WorkRequest request : List.copyOf(requests.values())) {
                bytes = new byte[0];
                cq(new WorkCompletion(request.wrId(), Layout.IBV_WC_WR_FLUSH_ERR,
                    request.kind() == WorkRequest.Kind.RECEIVE ? WcOpcode.RECV : WcOpcode.SEND, 0, 0, 0, 1, 0, 0));
            }
        }

        @Override
        public int outstanding() {
            return posted.get();
        }

        @Override
        public void destroy() {
            calls.add("destroy");
            destroyed = true;
        }
    }

    /** A scheduler whose tasks run only when a test runs them. */
    private static final class ManualScheduler implements Scheduler {
        final List<TaskView> tasks = new CopyOnWriteArrayList<>();

        /** The tasks of {@code delay} not cancelled. */
        List<TaskView> waiting(Duration delay) {
            return tasks.stream().filter(t -> t.delay.equals(delay) && !t.cancelled).toList();
        }

        @Override
        public Runnable schedule(Runnable task, Duration delay) {
            TaskView view = new TaskView(task, delay);
            tasks.add(view);
            return () -> view.cancelled = true;
        }

        static final class TaskView {
            final Runnable task;
            final Duration delay;
            volatile boolean cancelled;

            TaskView(Runnable task, Duration delay) {
                this.task = task;
                this.delay = delay;
            }
        }
    }
}
