package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
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
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
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
        ListenerSettings settings = ListenerSettings.builder().address("10.0.0.1").port(7471).acceptPolicy(policy)
            .allowedPeers(peers).receiveBufferCount(BUFFERS).receiveBufferSize(64).maxConcurrentDeliveries(1)
            .maxConnections(max).maxConnectionsPerPeer(perPeer).idleTimeoutSeconds(idleSeconds).build();
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

        @Override
        public void deliver(ConnectionEvent event) {
            last = event.connection();
            lastStatus = event.status();
            onEvent.accept(event);
            seen.add(event.type() + (event.type() == CmEventType.CONNECT_REQUEST
                ? (event.isAccepted() ? " accepted" : " rejected") : ""));
        }

        @Override
        public void deliver(MessageCompletion completion) {
            last = completion.connection();
            onCompletion.accept(completion);
            seen.add((completion.isReceive() ? "receive " : "send ") + completion.sequence() + " "
                + (completion.isSuccess() ? new String(completion.data(), StandardCharsets.UTF_8) : "failed"));
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
        public WorkRequest send(byte[] message) {
            calls.add("send " + new String(message, StandardCharsets.UTF_8));
            return post(WorkRequest.Kind.SEND);
        }

        @Override
        public void repostReceive() {
            calls.add("repost");
            post(WorkRequest.Kind.RECEIVE);
        }

        @Override
        public WorkRequest complete(WorkCompletion completion) {
            PostedRequest request = requests.remove(completion.wrId());
            if (request == null || destroyed) {
                return null;
            }
            posted.decrementAndGet();
            request.complete(completion, completion.opcode() == WcOpcode.RECV ? bytes : null);
            return request;
        }

        private byte[] bytes;

        /** The CQ gives a completion of the oldest request of that kind. */
        void complete(WcOpcode opcode, int status, byte[] data) {
            WorkRequest.Kind kind = opcode == WcOpcode.RECV ? WorkRequest.Kind.RECEIVE : WorkRequest.Kind.SEND;
            long wrId = requests.values().stream().filter(r -> r.kind() == kind).mapToLong(WorkRequest::wrId).min()
                .orElseThrow();
            bytes = data;
            cq(new WorkCompletion(wrId, status, opcode, 0, data.length, 0, 1, 0, 0));
        }

        /** As DeviceQueueSet does: polled (on the loop), then delivered (in order). */
        void cq(WorkCompletion completion) {
            completions.delivered(completion, completions.polled(completion));
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
