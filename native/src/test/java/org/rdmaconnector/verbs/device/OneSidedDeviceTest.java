package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.InboundConnection;
import org.rdmaconnector.connector.MemoryRegion;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.RemoteAccess;
import org.rdmaconnector.connector.RemoteRegion;
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WcStatus;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.connector.spi.Pool;
import org.rdmaconnector.connector.spi.PooledConnections;
import org.rdmaconnector.verbs.TestProbes;

/**
 * One-sided RDMA on rxe0 through the connector API, between a pooled client and a listener: RDMA WRITE, WRITE with
 * immediate and READ in both directions with every byte compared, the listener's endpoint given each WRITE with
 * immediate as a receive with its immediate data (more of them than it has receive buffers, so each receive is
 * posted again), a WRITE to a region registered without remote write ending that connection with
 * {@code IBV_WC_REM_ACCESS_ERR} while another connection goes on, a region's rkey refused once it is closed, and
 * unsignaled requests completed by the signaled one after them (selective signaling: WRITEs and READs of a client,
 * WRITEs and staged sends of a listener, which reach no CompletionListener).
 * Regions are handed over as {@link RemoteRegion} bytes in messages. Nothing is left open: fds, threads, direct
 * memory and the kernel's RDMA objects (memory regions included) are back to the baseline after each test.
 */
@Tag("device")
@Timeout(300)
class OneSidedDeviceTest {
    private static final int REGION = 64 * 1024;
    private static final int RECEIVE_BUFFERS = 4;
    private static final Set<RemoteAccess> READ_WRITE = EnumSet.of(RemoteAccess.READ, RemoteAccess.WRITE);

    private ConnectorStack stack;
    private Recorder recorder;
    private Activation listener;
    private PooledConnections factory;
    private InetSocketAddress address;
    private Baseline before;

    // timed too: JUnit's timeout watcher thread starts with the first timed call, and so is in the baseline
    @BeforeEach
    @Timeout(120)
    void start() throws Exception {
        before = Baseline.afterWarmUp();
        stack = new ConnectorStack();
        recorder = new Recorder(null);
        int port = Loopback.nextPort();
        address = new InetSocketAddress(Loopback.ADDRESS, port);
        listener = stack.hub.activate(ListenerSettings.builder().address(Loopback.ADDRESS).port(port)
            .acceptPolicy("accept").receiveBufferCount(RECEIVE_BUFFERS).receiveBufferSize(256).build(), recorder);
        await("listening", () -> listener.state() == Activation.State.LISTENING);
        factory = new PooledConnections(ChannelSettings.DEFAULTS, new Pool.Settings(0, 2, Duration.ofMinutes(1),
            Duration.ofSeconds(1)), stack.devices, stack.engine, (task, delay) -> () -> { });
    }

    @AfterEach
    void stop() throws Exception {
        factory.close();
        await("every connection is gone from the listener", () -> listener.connectionCount() == 0);
        listener.close();
        stack.close();
        Baseline after = Baseline.awaitBack(before);
        assertTrue(after.isBackTo(before), "every fd, thread, direct buffer and RDMA object (QP, MR, CQ, PD, CM id) "
            + "of the test is gone: before " + before + ", after " + after);
    }

    @Test
    void writesWritesWithImmediateAndReadsCarryEveryByteBothWays() throws Exception {
        try (RdmaConnection client = factory.getConnection()) {
            Pair pair = connectedWithRegions(client, 1, 2);
            RdmaEndpoint endpoint = pair.endpoint();
            InboundConnection inbound = pair.inbound();
            MemoryRegion clientRegion = pair.clientRegion();
            MemoryRegion serverRegion = pair.serverRegion();
            RemoteRegion serverRemote = pair.serverRemote();
            RemoteRegion clientRemote = pair.clientRemote();
            assertEquals(serverRegion.remoteRegion(), serverRemote, "decoded as encoded");

            // client -> listener: a WRITE, then a WRITE with immediate; RC's order puts both in place before the
            // listener's endpoint sees the immediate
            assertSuccess(endpoint.write(clientRegion, 0, 16384, serverRemote, 0), WcOpcode.RDMA_WRITE);
            assertSuccess(endpoint.writeWithImmediate(clientRegion, 16384, 16384, serverRemote, 16384, 0x12345678),
                WcOpcode.RDMA_WRITE);
            MessageCompletion immediate = awaitImmediate(1);
            assertEquals(0x12345678, immediate.workCompletion().immediateData());
            assertEquals(16384, immediate.workCompletion().byteLength(), "byte_len is the write's length");
            assertEquals(0, immediate.data().length, "nothing of the write is in the receive buffer");
            assertArrayEquals(bytes(clientRegion, 0, 32768), bytes(serverRegion, 0, 32768),
                "the listener's region holds what the client wrote");

            // client <- listener: a READ of the listener's untouched half
            assertSuccess(endpoint.read(clientRegion, 32768, 32768, serverRemote, 32768), WcOpcode.RDMA_READ);
            assertArrayEquals(pattern(2, 32768, 32768), bytes(clientRegion, 32768, 32768),
                "the client read the listener's bytes");

            // listener -> client: a WRITE, a WRITE with immediate into a receive the client posted, a READ
            fill(serverRegion, 3);
            fill(clientRegion, 4);
            assertSuccess(inbound.write(serverRegion, 0, 8192, clientRemote, 0), WcOpcode.RDMA_WRITE);
            WorkRequest clientReceive = endpoint.receive();
            assertSuccess(inbound.writeWithImmediate(serverRegion, 8192, 8192, clientRemote, 8192, 0xCAFEBABE),
                WcOpcode.RDMA_WRITE);
            WorkCompletion received = clientReceive.await(Loopback.TIMEOUT);
            assertNotNull(received, "the client's receive completed");
            assertTrue(received.isSuccess() && received.hasImmediate(), received.toString());
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, received.opcode());
            assertEquals(0xCAFEBABE, received.immediateData());
            assertEquals(0, clientReceive.data().length, "a staged receive taken by a write holds no bytes");
            assertArrayEquals(pattern(3, 0, 16384), bytes(clientRegion, 0, 16384),
                "the client's region holds what the listener wrote");
            assertSuccess(inbound.read(serverRegion, 16384, 16384, clientRemote, 16384), WcOpcode.RDMA_READ);
            assertArrayEquals(pattern(4, 16384, 16384), bytes(serverRegion, 16384, 16384),
                "the listener read the client's bytes");
            await("the listener's endpoint saw its own writes and read complete", () -> recorder.sends().stream()
                .filter(c -> c.isSuccess() && c.connection() == inbound).map(c -> c.workCompletion().opcode())
                .toList().containsAll(List.of(WcOpcode.RDMA_WRITE, WcOpcode.RDMA_READ)));

            // zero-byte writes with immediate are notifications; more of them than the listener has receive buffers:
            // each receive a write took is posted again once delivered
            for (int i = 2; i <= 3 * RECEIVE_BUFFERS; i++) {
                assertSuccess(endpoint.writeWithImmediate(clientRegion, 0, 0, serverRemote, 0, i),
                    WcOpcode.RDMA_WRITE);
                MessageCompletion notification = awaitImmediate(i);
                assertEquals(i, notification.workCompletion().immediateData());
                assertEquals(0, notification.workCompletion().byteLength());
            }
            assertTrue(endpoint.isConnected() && inbound.isConnected(), "both ends are still connected");
            endpoint.close();
        }
    }

    @Test
    void unsignaledRequestsCompleteWithTheNextSignaledOneAndMakeNoCompletionOfTheirOwn() throws Exception {
        try (RdmaConnection client = factory.getConnection()) {
            Pair pair = connectedWithRegions(client, 8, 9);
            RdmaEndpoint endpoint = pair.endpoint();
            InboundConnection inbound = pair.inbound();

            // 32 WRITEs of 1 KiB and 16 READs of 1 KiB, one in 16 signaled: three completions for 48 requests
            long completionsBefore = client.channels().completionsRead();
            List<WorkRequest> requests = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                requests.add(endpoint.write(pair.clientRegion(), i * 1024, 1024, pair.serverRemote(), i * 1024,
                    i % 16 == 15));
            }
            for (int i = 0; i < 16; i++) {
                requests.add(endpoint.read(pair.clientRegion(), 32768 + i * 1024, 1024, pair.serverRemote(),
                    32768 + i * 1024, i == 15));
            }
            assertSuccess(requests.get(requests.size() - 1), WcOpcode.RDMA_READ);
            for (int i = 0; i < requests.size(); i++) {
                WorkRequest r = requests.get(i);
                assertTrue(r.isDone() && r.result().isSuccess(), "request " + i + " completed with the signaled one "
                    + "after it: " + r);
                assertEquals(r.wrId(), r.result().wrId());
                assertEquals(i < 32 ? WcOpcode.RDMA_WRITE : WcOpcode.RDMA_READ, r.result().opcode(), r.toString());
            }
            assertEquals(3, client.channels().completionsRead() - completionsBefore,
                "only the signaled requests made work completions");
            assertArrayEquals(pattern(8, 0, 32768), bytes(pair.serverRegion(), 0, 32768), "every WRITE is in place");
            assertArrayEquals(pattern(9, 32768, 16384), bytes(pair.clientRegion(), 32768, 16384),
                "every READ is in place");

            // three times the send queue's depth unsignaled, never more than that depth outstanding: the connector
            // signals one in every depth on its own, or the oldest request would never complete and the send queue
            // would stay full
            int depth = ChannelSettings.DEFAULTS.maxSendWr();
            List<WorkRequest> window = new ArrayList<>();
            for (int i = 0; i < 3 * depth; i++) {
                if (i >= depth) {
                    assertSuccess(window.get(i - depth), WcOpcode.RDMA_WRITE);
                }
                window.add(endpoint.write(pair.clientRegion(), 0, 64, pair.serverRemote(), 0, false));
            }
            assertSuccess(endpoint.write(pair.clientRegion(), 0, 0, pair.serverRemote(), 0, true), WcOpcode.RDMA_WRITE);
            assertTrue(window.stream().allMatch(r -> r.isDone() && r.result().isSuccess()), "all completed");

            // the listener's unsignaled requests reach no CompletionListener; its signaled one does (its first
            // writes: the completions of a connection are delivered in order, so any of the others came first)
            for (int i = 0; i < 3; i++) {
                inbound.write(pair.serverRegion(), 0, 1024, pair.clientRemote(), 0, false);
            }
            WorkRequest last = inbound.write(pair.serverRegion(), 0, 1024, pair.clientRemote(), 0, true);
            assertSuccess(last, WcOpcode.RDMA_WRITE);
            List<MessageCompletion> writes = deliveredUpTo(last, WcOpcode.RDMA_WRITE);
            assertEquals(1, writes.size(), "only the signaled write was delivered: " + writes);
            assertTrue(endpoint.isConnected() && inbound.isConnected(), "both ends are still connected");
            endpoint.close();
        }
    }

    @Test
    void aListenersUnsignaledSendsFreeTheirSlotsWithTheSignaledOneAfterThem() throws Exception {
        try (RdmaConnection client = factory.getConnection()) {
            RdmaEndpoint endpoint = client.connect(address, Loopback.TIMEOUT);
            InboundConnection inbound = accepted(0);
            int messages = 3 * RECEIVE_BUFFERS;
            List<WorkRequest> receives = new ArrayList<>();
            for (int i = 0; i < messages; i++) {
                receives.add(endpoint.receive());
            }
            // the listener's connection has RECEIVE_BUFFERS (4) send slots: the second of two sends leaves fewer than
            // three quarters free and is signaled whatever was asked; its completion frees both slots (without it,
            // the sends would never complete, and the fifth would find every slot in flight)
            List<WorkRequest> sends = new ArrayList<>();
            for (int i = 0; i < messages; i++) {
                sends.add(inbound.send(("message " + i).getBytes(StandardCharsets.UTF_8), false));
                if (i % 2 == 1) {
                    assertSuccess(sends.get(i), WcOpcode.SEND);
                    assertTrue(sends.stream().allMatch(WorkRequest::isDone), "the unsignaled send before it too");
                }
            }
            for (int i = 0; i < messages; i++) {
                WorkCompletion received = receives.get(i).await(Loopback.TIMEOUT);
                assertNotNull(received, "message " + i + " arrived");
                assertEquals("message " + i, new String(receives.get(i).data(), StandardCharsets.UTF_8));
            }
            assertEquals(messages / 2, deliveredUpTo(sends.get(messages - 1), WcOpcode.SEND).size(), "one send in 2 "
                + "made a completion; the rest reached no CompletionListener");
            assertTrue(endpoint.isConnected() && inbound.isConnected(), "both ends are still connected");
            endpoint.close();
        }
    }

    @Test
    void aConnectionWhoseLastSendWentUnsignaledEndsWithoutWaitingForIt() throws Exception {
        try (RdmaConnection client = factory.getConnection()) {
            RdmaEndpoint endpoint = client.connect(address, Loopback.TIMEOUT);
            InboundConnection inbound = accepted(0);
            WorkRequest receive = endpoint.receive();
            WorkRequest send = inbound.send("the last word".getBytes(StandardCharsets.UTF_8), false);
            assertNotNull(receive.await(Loopback.TIMEOUT), "the message arrived");
            assertFalse(send.isDone(), "an unsignaled send with no signaled one after it stays in flight");
            endpoint.close();
            // done, it makes no completion, not even a flush: the connection must not wait for one until its drain
            // deadline (60 s, more than the await's bound)
            await("the listener's end is gone", () -> listener.connectionCount() == 0);
            await("the destroy completed the send", send::isDone);
            assertEquals(WcStatus.WR_FLUSH_ERR.value(), send.result().status(), send.toString());
        }
    }

    @Test
    void aWriteToARegionWithoutRemoteWriteEndsOnlyThatConnection() throws Exception {
        try (RdmaConnection client = factory.getConnection(); RdmaConnection other = factory.getConnection()) {
            RdmaEndpoint offender = client.connect(address, Loopback.TIMEOUT);
            InboundConnection offended = accepted(0);
            RdmaEndpoint bystander = other.connect(address, Loopback.TIMEOUT);
            InboundConnection served = accepted(1);
            MemoryRegion local = client.register(ByteBuffer.allocateDirect(4096));
            MemoryRegion readOnly = offended.register(ByteBuffer.allocateDirect(4096), Set.of(RemoteAccess.READ));
            MemoryRegion localOnly = offended.register(ByteBuffer.allocateDirect(4096), Set.of());

            // what the connector can know is refused before anything is posted
            RemoteRegion honest = handToClient(offended, offender, readOnly);
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> offender.write(local, 0, 16, honest, 0));
            assertTrue(refused.getMessage().contains("without RemoteAccess.WRITE"), refused.getMessage());
            assertTrue(assertThrows(IllegalStateException.class, localOnly::remoteRegion).getMessage()
                .contains("local access only"));

            // a peer that writes anyway (the region's own address and rkey, claiming write access) meets the device
            RemoteRegion forged = new RemoteRegion(honest.address(), honest.length(), honest.rkey(),
                Set.of(RemoteAccess.WRITE));
            WorkRequest pending = offender.receive();
            WorkCompletion failed = offender.write(local, 0, 16, forged, 0).await(Loopback.TIMEOUT);
            assertNotNull(failed, "the write completed");
            assertEquals(WcStatus.REM_ACCESS_ERR.value(), failed.status(), failed.statusText());
            assertEquals("remote access error", failed.statusText());
            await("the offending endpoint is disconnected", () -> !offender.isConnected());
            await("its receive is flushed", () -> pending.isDone()
                && pending.result().status() == WcStatus.WR_FLUSH_ERR.value());
            await("the listener's end of it is gone", () -> disconnected(offended) && listener.connectionCount() == 1);
            assertThrows(IllegalStateException.class, () -> offender.write(local, 0, 16, forged, 0),
                "the ended endpoint posts nothing more");

            // the other connection, on the same listener and device, goes on
            MemoryRegion mine = other.register(ByteBuffer.allocateDirect(4096), READ_WRITE);
            MemoryRegion theirs = served.register(ByteBuffer.allocateDirect(4096), READ_WRITE);
            fill(mine, 5);
            fill(theirs, 6);
            RemoteRegion remote = handToClient(served, bystander, theirs);
            assertSuccess(bystander.write(mine, 0, 2048, remote, 0), WcOpcode.RDMA_WRITE);
            assertSuccess(bystander.read(mine, 2048, 2048, remote, 2048), WcOpcode.RDMA_READ);
            assertArrayEquals(pattern(5, 0, 2048), bytes(theirs, 0, 2048));
            assertArrayEquals(pattern(6, 2048, 2048), bytes(mine, 2048, 2048));
            assertTrue(bystander.isConnected() && served.isConnected(), "the other connection is still connected");
            System.out.printf("OneSidedDeviceTest: a write to a region without remote write: %s (status %d); "
                + "the other connection wrote and read 2048 bytes each%n", failed.statusText(), failed.status());
        }
    }

    @Test
    void aClosedRegionsRkeyIsRefused() throws Exception {
        try (RdmaConnection client = factory.getConnection()) {
            RdmaEndpoint endpoint = client.connect(address, Loopback.TIMEOUT);
            InboundConnection inbound = accepted(0);
            MemoryRegion local = client.register(ByteBuffer.allocateDirect(4096));
            MemoryRegion region = inbound.register(ByteBuffer.allocateDirect(4096), READ_WRITE);
            RemoteRegion remote = handToClient(inbound, endpoint, region);
            fill(local, 7);
            assertSuccess(endpoint.write(local, 0, 4096, remote, 0), WcOpcode.RDMA_WRITE);
            assertArrayEquals(pattern(7, 0, 4096), bytes(region, 0, 4096), "written while registered");

            region.close();
            assertThrows(IllegalStateException.class, region::remoteRegion, "a closed region is not handed over");
            WorkCompletion read = endpoint.read(local, 0, 4096, remote, 0).await(Loopback.TIMEOUT);
            assertNotNull(read, "the read completed");
            assertEquals(WcStatus.REM_ACCESS_ERR.value(), read.status(), read.statusText());
            await("the endpoint is disconnected", () -> !endpoint.isConnected());
            await("the listener's end is gone", () -> listener.connectionCount() == 0);
        }
    }

    /** A client endpoint and its accepted connection, each with a region of remote read and write handed over. */
    private record Pair(RdmaEndpoint endpoint, InboundConnection inbound, MemoryRegion clientRegion,
                        MemoryRegion serverRegion, RemoteRegion serverRemote, RemoteRegion clientRemote) {
    }

    /** Connects through {@code client}; the regions are filled with the patterns of the two seeds. */
    private Pair connectedWithRegions(RdmaConnection client, int clientSeed, int serverSeed)
        throws InterruptedException {
        RdmaEndpoint endpoint = client.connect(address, Loopback.TIMEOUT);
        InboundConnection inbound = accepted(0);
        MemoryRegion clientRegion = client.register(ByteBuffer.allocateDirect(REGION), READ_WRITE);
        MemoryRegion serverRegion = inbound.register(ByteBuffer.allocateDirect(REGION), READ_WRITE);
        fill(clientRegion, clientSeed);
        fill(serverRegion, serverSeed);
        RemoteRegion serverRemote = handToClient(inbound, endpoint, serverRegion);
        return new Pair(endpoint, inbound, clientRegion, serverRegion, serverRemote,
            handToListener(endpoint, clientRegion));
    }

    /**
     * The listener's own completions of {@code opcode} delivered to its endpoint, once {@code last}'s is: a
     * connection's completions are delivered in order, so none of the requests before it can follow.
     */
    private List<MessageCompletion> deliveredUpTo(WorkRequest last, WcOpcode opcode) throws InterruptedException {
        await("the listener's endpoint was given " + last, () -> recorder.sends().stream()
            .anyMatch(c -> c.workCompletion().wrId() == last.wrId()));
        return recorder.sends().stream().filter(c -> c.workCompletion().opcode() == opcode).toList();
    }

    /** The connection the listener accepted {@code index}-th in this test, once ESTABLISHED. */
    private InboundConnection accepted(int index) throws InterruptedException {
        await("connection " + index + " established at the listener", () -> established().size() > index);
        return established().get(index);
    }

    private List<InboundConnection> established() {
        return recorder.events.stream().filter(e -> e.type() == CmEventType.ESTABLISHED)
            .map(ConnectionEvent::connection).toList();
    }

    private boolean disconnected(InboundConnection connection) {
        return recorder.events.stream().anyMatch(e -> e.type() == CmEventType.DISCONNECTED
            && e.connection() == connection);
    }

    /** The listener sends {@code region}'s RemoteRegion in a message; the client decodes it. */
    private static RemoteRegion handToClient(InboundConnection inbound, RdmaEndpoint endpoint, MemoryRegion region)
        throws InterruptedException {
        WorkRequest receive = endpoint.receive();
        inbound.send(region.remoteRegion().toBytes());
        assertNotNull(receive.await(Loopback.TIMEOUT), "the client received the region");
        assertTrue(receive.result().isSuccess(), receive.toString());
        return RemoteRegion.fromBytes(receive.data());
    }

    /** The client sends {@code region}'s RemoteRegion in a message; the listener's endpoint decodes it. */
    private RemoteRegion handToListener(RdmaEndpoint endpoint, MemoryRegion region) throws InterruptedException {
        int before = recorder.receives().size();
        assertSuccess(endpoint.send(region.remoteRegion().toBytes()), WcOpcode.SEND);
        await("the listener received the region", () -> recorder.receives().size() > before);
        MessageCompletion message = recorder.receives().get(before);
        assertEquals(WcOpcode.RECV, message.workCompletion().opcode());
        return RemoteRegion.fromBytes(message.data());
    }

    /** The {@code count}-th WRITE with immediate the listener's endpoint was given. */
    private MessageCompletion awaitImmediate(int count) throws InterruptedException {
        await(count + " writes with immediate delivered", () -> immediates().size() >= count);
        MessageCompletion c = immediates().get(count - 1);
        assertTrue(c.isReceive() && c.isSuccess() && c.workCompletion().hasImmediate(), c.toString());
        return c;
    }

    private List<MessageCompletion> immediates() {
        return recorder.receives().stream()
            .filter(c -> c.workCompletion().opcode() == WcOpcode.RECV_RDMA_WITH_IMM).toList();
    }

    private static void assertSuccess(WorkRequest request, WcOpcode opcode) throws InterruptedException {
        WorkCompletion wc = request.await(Loopback.TIMEOUT);
        assertNotNull(wc, "no work completion for " + request + " within " + Loopback.TIMEOUT);
        assertTrue(wc.isSuccess(), request + ": " + wc.statusText());
        assertEquals(opcode, wc.opcode(), request.toString());
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        TestProbes.await(what, Loopback.TIMEOUT, condition);
    }

    private static void fill(MemoryRegion region, int seed) {
        region.buffer().put(pattern(seed, 0, region.length()));
    }

    private static byte[] bytes(MemoryRegion region, int offset, int length) {
        byte[] bytes = new byte[length];
        region.buffer().get(offset, bytes);
        return bytes;
    }

    /** Bytes {@code [offset, offset + length)} of the pattern of {@code seed}: each differs from its neighbours. */
    private static byte[] pattern(int seed, int offset, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            int at = offset + i;
            bytes[i] = (byte) (at * 31 + (at >>> 8) * 7 + seed * 101);
        }
        return bytes;
    }
}
