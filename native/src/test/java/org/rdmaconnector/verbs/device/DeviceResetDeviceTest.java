package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ConnectionHandle;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.connector.spi.Pool;
import org.rdmaconnector.connector.spi.PooledConnections;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.Device;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.ProtectionDomain;
import org.rdmaconnector.verbs.TestProbes;

/**
 * A second Soft-RoCE device, {@code rxe1} on {@code dummy1} (10.0.1.1), removed ({@code rdma link delete}) and added
 * again under the same name while a listener and a pooled client echo messages over it, in one JVM. Asserts: the JVM
 * survives (the VM tier runs this with {@code MALLOC_PERTURB_} set, so a use of freed librdmacm memory shows); the
 * listener waits for the device; the kernel finishes the removal while the JVM runs, which it does only once no
 * context, id or verbs object of this process is left on the device (rxe cannot take them away, it has no
 * disassociate); the registry's context of the old device is closed; after the re-add the registry opens the NEW
 * device (a new kernel index, although Soft-RoCE gives it the same GUID), the listener listens again and the pool's
 * connections echo again, every echo byte for byte; and fds, threads and {@code rdma res} are back to the baseline
 * taken with the same listener and pool idle on the old device.
 *
 * <p>What librdmacm 44 needs for this, and the connector does: a {@code DeviceContext} holds librdmacm's reference
 * on its device for its whole life (freeing the list at once let librdmacm close the context under our PD and CQ);
 * librdmacm notices a removal only when it lists the devices again (a closed view lists them, so librdmacm closes its
 * own context of the removed device then), and not at all while no device is present (its list sync returns ENODEV
 * then, so it keeps the removed device's context and the removal waits: this test keeps rxe0).
 *
 * <p>The second test removes a third device, {@code rxe2} on {@code dummy2} (10.0.2.1), under a pooled handle whose
 * sends are held in flight by receiver-not-ready (the listener's endpoint holds its first delivery), and asserts what
 * rdma_get_cm_event(3) asks of a user on {@code DEVICE_REMOVAL}: every waiter ends at once with "device removed",
 * later use fails the same way, the set is never lent again, and closing the handle lets the kernel finish.
 *
 * <p>Tagged {@code device-reset}, not {@code device}: it runs in a VM boot of its own (DeviceResetIT), since a
 * mistake here kills the JVM.
 */
@Tag("device-reset")
@Timeout(600)
class DeviceResetDeviceTest {
    private static final String NETDEV = "dummy1";
    private static final String DEVICE = "rxe1";
    private static final String ADDRESS = "10.0.1.1";
    /** The VM's first device, present throughout: librdmacm 44 notices no removal while no device is left. */
    private static final String KEPT_DEVICE = "rxe0";
    /** A step of the removal or re-add; the listener's backoff between binds grows to 30 s. */
    private static final Duration STEP = Duration.ofSeconds(120);
    private static final Duration MESSAGE_TIMEOUT = Duration.ofSeconds(10);
    /** How long the removal must stay blocked by a view held open on the device. */
    private static final Duration HELD_CHECK = Duration.ofSeconds(3);

    @Test
    void aDeviceRemovedUnderLoadIsLetGoAndTheDeviceAddedAgainServes() throws Exception {
        addSoftRoce(NETDEV, ADDRESS, DEVICE);
        try (ConnectorStack stack = new ConnectorStack()) {
            int port = Loopback.nextPort();
            Activation echo = stack.hub.activate(ListenerSettings.of(ADDRESS, port, null, "accept", null, 4, 256, 2),
                Recorder.echo());
            await("listening on " + DEVICE, Loopback.TIMEOUT, () -> echo.state() == Activation.State.LISTENING);
            try (PooledConnections pooled = new PooledConnections(
                     new ChannelSettings(DEVICE, 1, 64, 0, 4, 4, 0, 1 << 20),
                     new Pool.Settings(0, 1, Duration.ofMinutes(10), Duration.ofSeconds(5)),
                     stack.devices, stack.engine, stack.runtime.scheduler());
                 Load load = new Load(pooled, new InetSocketAddress(ADDRESS, port))) {
                for (int i = 0; i < 3; i++) {
                    load.cycle(); // warm-up: the pool's set and the listener's queue set exist
                }
                await("the warm-up connections are gone", Loopback.TIMEOUT, () -> echo.connectionCount() == 0);
                Baseline before = Baseline.take();
                Device old = device(stack);
                // an application's own view of the device, with a PD and a CQ, open across the removal
                DeviceContext held = DeviceContext.open(DEVICE);
                ProtectionDomain heldPd = held.allocateProtectionDomain();
                CompletionQueue heldCq = held.createCompletionQueue(16, null, 0);

                load.start();
                await("50 echoes under load", STEP, () -> load.echoed.get() >= 50);
                long removing = System.nanoTime();
                long echoedBefore = load.echoed.get();
                Process removal = new ProcessBuilder("rdma", "link", "delete", DEVICE).inheritIO().start();
                await("the listener waits for its device", STEP,
                    () -> echo.state() == Activation.State.WAITING_FOR_DEVICE);
                await("the registry closed the removed device's context", STEP,
                    () -> !stack.devices.openDevices().contains(old));
                long released = System.nanoTime();

                // Only 'held' refers to the device now. librdmacm lists the devices (any open does) and sees rxe1
                // gone: it must keep its context open for the view, or the PD and CQ point into freed memory.
                DeviceContext.open(KEPT_DEVICE).close();
                assertFalse(removal.waitFor(HELD_CHECK.toMillis(), TimeUnit.MILLISECONDS), "rdma link delete "
                    + DEVICE + " finished while a view of the device was open: librdmacm closed the context under it");
                String heldQuery = queryOutcome(held);
                heldCq.close();
                heldPd.close();
                held.close();
                long heldClosed = System.nanoTime();
                if (!removal.waitFor(STEP.toSeconds(), TimeUnit.SECONDS)) {
                    fail("rdma link delete " + DEVICE + " did not finish within " + STEP + ": something of this "
                        + "process still holds the device; open contexts " + stack.devices.openDevices() + ", pool "
                        + pooled.counters() + ", listener connections " + echo.connectionCount() + ", load " + load);
                }
                assertEquals(0, removal.exitValue(), "rdma link delete " + DEVICE);
                long removed = System.nanoTime();
                long gapFds = TestProbes.openFds();
                long failuresInGap = load.failures.get();

                Ip.rdma("link", "add", DEVICE, "type", "rxe", "netdev", NETDEV);
                long added = System.nanoTime();
                await("listening again", STEP, () -> echo.state() == Activation.State.LISTENING);
                long relistened = System.nanoTime();
                long echoedAtAdd = load.echoed.get();
                await("50 echoes after the re-add", STEP, () -> load.echoed.get() >= echoedAtAdd + 50);
                long served = System.nanoTime();
                Device successor = device(stack);
                load.stop();

                await("every accepted connection destroyed", Loopback.TIMEOUT, () -> echo.connectionCount() == 0);
                Baseline after = Baseline.awaitBack(before);
                System.out.printf("DeviceResetDeviceTest: MALLOC_PERTURB_=%s; %s removed under load after %d echoes "
                        + "and added again as %s; the connector let go of it %d ms after rdma link delete started; "
                        + "the removal then waited for a view held open (%d ms checked; its ibv_query_device: %s) "
                        + "and finished %d ms after the view closed; %d failed cycles while it was gone (%s); "
                        + "listening again %d ms and 50 more echoes %d ms after the re-add; %d echoes in all, %d "
                        + "corrupt; fds %d before, %d while the device was gone, %d after%n  before %s%n  after  %s%n",
                    System.getenv("MALLOC_PERTURB_"), old, echoedBefore, successor, millis(released - removing),
                    HELD_CHECK.toMillis(), heldQuery, millis(removed - heldClosed), load.failures.get(),
                    load.failureKinds(),
                    millis(relistened - added), millis(served - added), load.echoed.get(), load.corrupt.get(),
                    before.fds(), gapFds, after.fds(), before, after);
                assertTrue(failuresInGap > 0, "the load saw the device gone");
                assertEquals(0, load.corrupt.get(), "echoes whose bytes differ");
                assertEquals(old.name(), successor.name());
                assertNotEquals(old.index(), successor.index(), "a device added again is a new registration");
                assertEquals(0, pooled.counters().borrowed(), "pool borrowed after the load stopped");
                assertTrue(after.isBackTo(before), "fds, threads, direct memory and rdma res after the device was "
                    + "removed and added again: before " + before + ", after " + after);
            }
            echo.close();
        }
    }

    private static final String OUT_NETDEV = "dummy2";
    private static final String OUT_DEVICE = "rxe2";
    private static final String OUT_ADDRESS = "10.0.2.1";
    /** Sends posted at once, as many as the set's send slots: one is taken by the listener, RNR holds the rest. */
    private static final int SENDS = 4;

    @Test
    void anOutboundSetWhoseDeviceIsRemovedEndsItsWaitersAtOnceAndLetsTheDeviceGo() throws Exception {
        addSoftRoce(OUT_NETDEV, OUT_ADDRESS, OUT_DEVICE);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch holding = new CountDownLatch(1);
        AtomicBoolean hold = new AtomicBoolean();
        // echoes; while 'hold' is set, holds its first delivery (bounded): the listener re-posts no receive meanwhile
        Recorder endpoint = new Recorder(c -> {
            if (!c.isSuccess()) {
                return;
            }
            if (hold.getAndSet(false)) {
                holding.countDown();
                try {
                    release.await(STEP.toSeconds(), TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            try {
                c.connection().send(c.data());
            } catch (RuntimeException e) {
                // the connection went with the device: nothing to echo on
            }
        });
        try (ConnectorStack stack = new ConnectorStack()) {
            int port = Loopback.nextPort();
            InetSocketAddress listener = new InetSocketAddress(OUT_ADDRESS, port);
            Activation echo = stack.hub.activate(ListenerSettings.of(OUT_ADDRESS, port, null, "accept", null, 1, 256,
                2), endpoint);
            await("listening on " + OUT_DEVICE, Loopback.TIMEOUT, () -> echo.state() == Activation.State.LISTENING);
            try (PooledConnections pooled = new PooledConnections(
                     new ChannelSettings(OUT_DEVICE, 1, 64, 0, SENDS, 4, 0, 1 << 20),
                     new Pool.Settings(0, 1, Duration.ofMinutes(10), Duration.ofSeconds(5)),
                     stack.devices, stack.engine, stack.runtime.scheduler())) {
                Device old;
                try (RdmaConnection warmUp = pooled.getConnection()) {
                    echoOnce(warmUp, listener, "warm-up");
                    old = ((ConnectionHandle) warmUp).channelSet().context().device();
                }
                await("the warm-up connection is gone", Loopback.TIMEOUT, () -> echo.connectionCount() == 0);
                Baseline before = Baseline.take();

                hold.set(true);
                RdmaConnection handle = pooled.getConnection();
                ChannelSet set = ((ConnectionHandle) handle).channelSet();
                RdmaEndpoint out = handle.connect(listener, MESSAGE_TIMEOUT);
                List<WorkRequest> waiting = new ArrayList<>();
                waiting.add(out.receive());
                for (int i = 0; i < SENDS; i++) {
                    waiting.add(out.send(("in flight " + i).getBytes(StandardCharsets.US_ASCII)));
                }
                assertTrue(holding.await(STEP.toSeconds(), TimeUnit.SECONDS), "the listener got the first message");
                // its ACK may still be on the way: the first send completes (successfully) on its own time
                assertTrue(waiting.get(1).await(STEP).isSuccess(), "the first send: " + waiting.get(1));
                List<WorkRequest> inFlight = waiting.stream().filter(w -> !w.isDone()).toList();
                assertEquals(SENDS, inFlight.size(), "the echo and the sends after the first are in flight (the "
                    + "listener's one receive buffer is held): " + waiting);

                long removing = System.nanoTime();
                Process removal = new ProcessBuilder("rdma", "link", "delete", OUT_DEVICE).inheritIO().start();
                List<String> errors = new ArrayList<>();
                for (WorkRequest request : inFlight) {
                    RdmaException e = assertThrows(RdmaException.class, () -> request.await(STEP),
                        () -> "a waiter of " + request + " after the removal");
                    assertRemoved(e);
                    errors.add(e.function());
                }
                long waitersEnded = System.nanoTime();
                release.countDown(); // the listener's held delivery: its connection is being released too
                assertEquals(ChannelSet.State.DEVICE_REMOVED, set.state());
                assertFalse(set.isHealthy(), "a set whose device was removed is not lent again");
                assertRemoved(assertThrows(RdmaException.class, () -> out.send(new byte[] {1}), "a later send"));
                assertRemoved(assertThrows(RdmaException.class, out::receive, "a later receive"));
                assertRemoved(assertThrows(RdmaException.class, () -> handle.connect(listener, MESSAGE_TIMEOUT),
                    "a later connect"));
                assertFalse(out.isConnected());
                // CM events are acked as they are read (a CQ's events are acked in batches, not counted here)
                await("every CM event read is acked", Loopback.TIMEOUT, () -> stack.engine.registrations().stream()
                    .filter(r -> r.name().startsWith("cm-events")).allMatch(r -> r.eventsAcked() == r.eventsRead()));
                assertTrue(stack.engine.registrations().stream().anyMatch(r -> r.name().startsWith("cm-events")),
                    "the set's CM events are still read: " + stack.engine.registrations());
                assertTrue(removal.isAlive(), "rdma link delete " + OUT_DEVICE + " finished while the handle held "
                    + "the set's queue pair, CQ and PD");

                long closing = System.nanoTime();
                handle.close();
                if (!removal.waitFor(STEP.toSeconds(), TimeUnit.SECONDS)) {
                    fail("rdma link delete " + OUT_DEVICE + " did not finish within " + STEP + " of closing the "
                        + "handle: open contexts " + stack.devices.openDevices() + ", pool " + pooled.counters()
                        + ", listener " + echo.state() + " with " + echo.connectionCount() + " connections");
                }
                assertEquals(0, removal.exitValue(), "rdma link delete " + OUT_DEVICE);
                long removed = System.nanoTime();
                Pool.Counters gone = pooled.counters();
                assertEquals(0, gone.idle(), "the set is not kept: " + gone);
                assertEquals(0, gone.borrowed());
                assertEquals(1, gone.destroyed(), "the set was destroyed when its handle closed: " + gone);
                assertEquals(1, gone.invalid(), gone.toString());
                assertFalse(stack.devices.openDevices().contains(old), "the registry closed the removed device");

                Ip.rdma("link", "add", OUT_DEVICE, "type", "rxe", "netdev", OUT_NETDEV);
                long added = System.nanoTime();
                await("listening again", STEP, () -> echo.state() == Activation.State.LISTENING);
                Device successor;
                try (RdmaConnection again = pooled.getConnection()) {
                    ChannelSet fresh = ((ConnectionHandle) again).channelSet();
                    assertEquals(ChannelSet.State.OPEN, fresh.state());
                    successor = fresh.context().device();
                    echoOnce(again, listener, "after the re-add");
                }
                long served = System.nanoTime();
                assertEquals(old.name(), successor.name());
                assertNotEquals(old.index(), successor.index(), "the next borrow opened a set on the new device");

                await("every accepted connection destroyed", Loopback.TIMEOUT, () -> echo.connectionCount() == 0);
                Baseline after = Baseline.awaitBack(before);
                System.out.printf("DeviceResetDeviceTest (outbound): MALLOC_PERTURB_=%s; %s removed with %d work "
                        + "requests in flight on a pooled handle: all ended with 'device removed' (%s) %d ms after "
                        + "rdma link delete started; the removal finished %d ms after the handle closed; pool %s; "
                        + "echoing again on %s %d ms after the re-add%n  before %s%n  after  %s%n",
                    System.getenv("MALLOC_PERTURB_"), old, inFlight.size(), errors, millis(waitersEnded - removing),
                    millis(removed - closing), pooled.counters(), successor, millis(served - added), before, after);
                assertEquals(1 + 1, pooled.counters().opened(), "one set on each device");
                assertTrue(after.isBackTo(before), "fds, threads, direct memory and rdma res after the outbound set's "
                    + "device was removed and added again: before " + before + ", after " + after);
            } finally {
                release.countDown();
            }
            echo.close();
        }
    }

    /** A dummy interface {@code netdev} with {@code address}/24, up, and Soft-RoCE device {@code device} on it. */
    private static void addSoftRoce(String netdev, String address, String device)
        throws java.io.IOException, InterruptedException {
        Ip.run("link", "add", netdev, "type", "dummy");
        Ip.run("addr", "add", address + "/24", "dev", netdev);
        Ip.run("link", "set", netdev, "up");
        Ip.rdma("link", "add", device, "type", "rxe", "netdev", netdev);
    }

    private static void assertRemoved(RdmaException e) {
        assertTrue(e.getMessage().contains("device removed: " + OUT_DEVICE + " "), e.getMessage());
        assertEquals("ENODEV", e.errnoName(), e.getMessage());
    }

    private static void echoOnce(RdmaConnection connection, InetSocketAddress listener, String text)
        throws InterruptedException {
        RdmaEndpoint endpoint = connection.connect(listener, MESSAGE_TIMEOUT);
        byte[] message = text.getBytes(StandardCharsets.US_ASCII);
        WorkRequest reply = endpoint.receive();
        WorkCompletion sent = endpoint.send(message).await(MESSAGE_TIMEOUT);
        assertTrue(sent != null && sent.isSuccess(), "send of " + text + ": " + sent);
        WorkCompletion received = reply.await(MESSAGE_TIMEOUT);
        assertTrue(received != null && received.isSuccess(), "echo of " + text + ": " + received);
        assertEquals(text, new String(reply.data(), StandardCharsets.US_ASCII));
    }

    /** The one context the registry has open on {@link #DEVICE}. */
    private static Device device(ConnectorStack stack) {
        List<Device> open = stack.devices.openDevices().stream().filter(d -> d.name().equals(DEVICE)).toList();
        assertEquals(1, open.size(), "contexts open on " + DEVICE + ": " + open);
        return open.get(0);
    }

    /** ibv_query_device on a view whose device is being removed: it may fail, it must not crash. */
    private static String queryOutcome(DeviceContext view) {
        try {
            return "answered, node guid " + String.format("%016x", view.query().nodeGuid());
        } catch (RdmaException e) {
            return "failed cleanly, " + e.getMessage();
        }
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    private static void await(String what, Duration timeout, java.util.function.BooleanSupplier condition)
        throws InterruptedException {
        TestProbes.await(what, timeout, condition);
    }

    /**
     * A pooled client on its own thread: borrow, connect, echo five messages and check their bytes, give back; a
     * failed cycle is counted by kind and the next one starts 100 ms later (a rate limit, not a wait for anything).
     */
    private static final class Load implements AutoCloseable {
        final PooledConnections pooled;
        final InetSocketAddress listener;
        final AtomicLong echoed = new AtomicLong();
        final AtomicLong failures = new AtomicLong();
        final AtomicLong corrupt = new AtomicLong();
        final ConcurrentHashMap<String, AtomicLong> kinds = new ConcurrentHashMap<>();
        private final Thread thread = new Thread(this::run, "device-reset-load");
        private volatile boolean stopped;
        private long sequence;

        Load(PooledConnections pooled, InetSocketAddress listener) {
            this.pooled = pooled;
            this.listener = listener;
        }

        void start() {
            thread.start();
        }

        private void run() {
            while (!stopped) {
                try {
                    cycle();
                } catch (RuntimeException | InterruptedException e) {
                    if (stopped) {
                        return;
                    }
                    failures.incrementAndGet();
                    String kind = e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage())
                        .replaceAll("[0-9]+", "N");
                    kinds.computeIfAbsent(kind.length() > 160 ? kind.substring(0, 160) : kind,
                        k -> new AtomicLong()).incrementAndGet();
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                }
            }
        }

        void cycle() throws InterruptedException {
            try (RdmaConnection connection = pooled.getConnection()) {
                RdmaEndpoint endpoint = connection.connect(listener, MESSAGE_TIMEOUT);
                for (int i = 0; i < 5 && !stopped; i++) {
                    byte[] message = ("device reset " + sequence++).getBytes(StandardCharsets.US_ASCII);
                    WorkRequest reply = endpoint.receive();
                    WorkCompletion sent = endpoint.send(message).await(MESSAGE_TIMEOUT);
                    if (sent == null || !sent.isSuccess()) {
                        throw new IllegalStateException("send: " + sent);
                    }
                    WorkCompletion received = reply.await(MESSAGE_TIMEOUT);
                    if (received == null || !received.isSuccess()) {
                        throw new IllegalStateException("echo: " + received);
                    }
                    if (!Arrays.equals(message, reply.data())) {
                        corrupt.incrementAndGet();
                        throw new IllegalStateException("echo of " + new String(message, StandardCharsets.US_ASCII)
                            + " differs: " + Arrays.toString(reply.data()));
                    }
                    echoed.incrementAndGet();
                }
            }
        }

        String failureKinds() {
            return kinds.toString();
        }

        void stop() throws InterruptedException {
            stopped = true;
            thread.join(TimeUnit.SECONDS.toMillis(60));
            assertTrue(!thread.isAlive(), "the load thread ended");
        }

        @Override
        public void close() throws InterruptedException {
            if (thread.isAlive()) {
                stop();
            }
        }

        @Override
        public String toString() {
            return "echoed " + echoed + ", failed " + failures + " " + kinds;
        }
    }
}
