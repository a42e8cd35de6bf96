package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.InboundConnection;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.verbs.TestProbes;

/**
 * An activation's delivery on the host, with a stand-in sink and a listener that was never started (it touches no
 * device until then): a failing delivery is attempted again and then counted, an unavailable endpoint holds the
 * delivery until it is available, closing ends that wait at once, and close returns only once the delivery running
 * has ended.
 */
@Timeout(30)
class ActivationTest {
    private static final Deliveries.Done NOTHING = () -> { };
    private static final ListenerSettings SETTINGS = ListenerSettings.of("10.0.0.1", 7471, null, null, null, null,
        null, 2);

    /** A sink that answers each call with the next of {@code outcomes} (null: delivered), then delivers. */
    private static class Scripted implements EndpointSink {
        final List<Exception> outcomes;
        final List<Long> calls = new CopyOnWriteArrayList<>();
        final CountDownLatch firstCall = new CountDownLatch(1);
        final AtomicInteger next = new AtomicInteger();
        volatile Exception always;

        Scripted(Exception... outcomes) {
            this.outcomes = java.util.Arrays.asList(outcomes);
        }

        @Override
        public String name() {
            return "scripted";
        }

        @Override
        public boolean receivesCmEvents() {
            return false;
        }

        @Override
        public boolean receivesCompletions() {
            return true;
        }

        @Override
        public void deliver(ConnectionEvent event) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void deliver(MessageCompletion completion) throws Exception {
            calls.add(completion.sequence());
            firstCall.countDown();
            Exception failure = always;
            if (failure == null) {
                int i = next.getAndIncrement();
                failure = i < outcomes.size() ? outcomes.get(i) : null;
            }
            if (failure != null) {
                throw failure;
            }
        }
    }

    private static Activation activation(EndpointSink sink, int attempts) {
        return new Activation(SETTINGS, sink, new Listener(SETTINGS, null, null, null, l -> { }), attempts, Runnable::run);
    }

    private static EndpointUnavailableException unavailable() {
        return new EndpointUnavailableException("the application is starting", null);
    }

    private static MessageCompletion completion(long sequence) {
        return completion(null, sequence);
    }

    private static InboundConnection connection(long number) {
        return new InboundConnection() {
            @Override
            public long number() {
                return number;
            }

            @Override
            public java.net.InetSocketAddress peerAddress() {
                return null;
            }

            @Override
            public java.net.InetSocketAddress localAddress() {
                return null;
            }

            @Override
            public boolean isConnected() {
                return true;
            }

            @Override
            public org.rdmaconnector.connector.WorkRequest send(byte[] message, int offset, int length, boolean signaled) {
                throw new UnsupportedOperationException();
            }

            @Override
            public org.rdmaconnector.connector.MemoryRegion register(java.nio.ByteBuffer buffer,
                    java.util.Set<org.rdmaconnector.connector.RemoteAccess> remoteAccess) {
                throw new UnsupportedOperationException();
            }

            @Override
            public org.rdmaconnector.connector.WorkRequest write(org.rdmaconnector.connector.MemoryRegion local,
                    int offset, int length, org.rdmaconnector.connector.RemoteRegion remote, int remoteOffset,
                    boolean signaled) {
                throw new UnsupportedOperationException();
            }

            @Override
            public org.rdmaconnector.connector.WorkRequest writeWithImmediate(
                    org.rdmaconnector.connector.MemoryRegion local, int offset, int length,
                    org.rdmaconnector.connector.RemoteRegion remote, int remoteOffset, int immediateData,
                    boolean signaled) {
                throw new UnsupportedOperationException();
            }

            @Override
            public org.rdmaconnector.connector.WorkRequest read(org.rdmaconnector.connector.MemoryRegion local,
                    int offset, int length, org.rdmaconnector.connector.RemoteRegion remote, int remoteOffset,
                    boolean signaled) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void disconnect() {
            }
        };
    }

    private static MessageCompletion completion(InboundConnection connection, long sequence) {
        return new MessageCompletion() {
            @Override
            public InboundConnection connection() {
                return connection;
            }

            @Override
            public WorkCompletion workCompletion() {
                return null;
            }

            @Override
            public boolean isReceive() {
                return true;
            }

            @Override
            public byte[] data() {
                return new byte[0];
            }

            @Override
            public int dataLength() {
                return 0;
            }

            @Override
            public int copyData(byte[] destination, int offset) {
                return 0;
            }

            @Override
            public long sequence() {
                return sequence;
            }

            @Override
            public String toString() {
                return "receive " + sequence + " of connection 1";
            }
        };
    }

    @Test
    void aDeliveryThatFailsOnceIsDeliveredOnTheNextAttempt() {
        Scripted sink = new Scripted(new IllegalStateException("rolled back"));
        Activation activation = activation(sink, ListenerSettings.DEFAULT_DELIVERY_ATTEMPTS);
        activation.deliver(completion(1), NOTHING);
        assertEquals(List.of(1L, 1L), sink.calls);
        assertEquals(1, activation.delivered());
        assertEquals(1, activation.errors());
        assertEquals(0, activation.undeliverable());
        activation.close();
    }

    @Test
    void aDeliveryThatFailsOnEveryAttemptIsCountedAsUndeliverableAndTheNextGoesOn() {
        Scripted sink = new Scripted(new IllegalStateException("1"), new IllegalStateException("2"),
            new IllegalStateException("3"));
        Activation activation = new Activation(SETTINGS, sink, new Listener(SETTINGS, null, null, null, l -> { }),
            Runnable::run);
        activation.deliver(completion(1), NOTHING);
        assertEquals(List.of(1L, 1L, 1L), sink.calls, "the default is " + ListenerSettings.DEFAULT_DELIVERY_ATTEMPTS);
        assertEquals(0, activation.delivered());
        assertEquals(3, activation.errors());
        assertEquals(1, activation.undeliverable());
        activation.deliver(completion(2), NOTHING);
        assertEquals(1, activation.delivered());
        assertTrue(activation.toString().endsWith("1 delivered, 3 errors, 1 undeliverable]"), activation.toString());
        activation.close();
    }

    @Test
    void anUnavailableEndpointHoldsTheDeliveryUntilItIsAvailableWithoutUsingUpAttempts() {
        Scripted sink = new Scripted(unavailable(), unavailable());
        Activation activation = activation(sink, 1);
        activation.deliver(completion(7), NOTHING); // held on this thread: 250 ms, then 500 ms
        assertEquals(List.of(7L, 7L, 7L), sink.calls);
        assertEquals(1, activation.delivered());
        assertEquals(0, activation.errors(), "unavailability is not a failure of the delivery");
        assertEquals(0, activation.undeliverable());
        activation.close();
    }

    @Test
    void closingTheActivationEndsTheWaitForAnUnavailableEndpointAtOnceAndCountsTheEvent() throws Exception {
        Scripted sink = new Scripted();
        sink.always = unavailable();
        Activation activation = activation(sink, 3);
        CountDownLatch returned = new CountDownLatch(1);
        Thread delivery = new Thread(() -> {
            activation.deliver(completion(1), NOTHING);
            returned.countDown();
        }, "delivery");
        delivery.start();
        assertTrue(sink.firstCall.await(10, TimeUnit.SECONDS));
        assertEquals(1, activation.inFlight(), "the delivery holds while the endpoint is unavailable");
        long start = System.nanoTime();
        activation.close();
        long closeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(returned.await(10, TimeUnit.SECONDS), "the held delivery returned");
        assertTrue(closeMillis < 5000, "close waited " + closeMillis + " ms for the held delivery");
        assertEquals(1, activation.undeliverable());
        assertEquals(0, activation.delivered());
        assertEquals(0, activation.inFlight());
        assertEquals(Activation.State.STOPPED, activation.state());
        activation.deliver(completion(2), NOTHING);
        assertFalse(sink.calls.contains(2L), "nothing is delivered after close");
    }

    @Test
    void closeReturnsOnlyWhenTheDeliveryRunningHasEndedAndNoneStartsAfterItThenClosesTheSink() throws Exception {
        CountDownLatch inEndpoint = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        AtomicBoolean deliveryEnded = new AtomicBoolean();
        List<Boolean> sinkClosed = new CopyOnWriteArrayList<>(); // at each close: whether the delivery had ended
        Scripted sink = new Scripted() {
            @Override
            public void close() {
                sinkClosed.add(deliveryEnded.get());
            }

            @Override
            public void deliver(MessageCompletion completion) throws Exception {
                super.deliver(completion);
                if (completion.sequence() == 1) {
                    inEndpoint.countDown();
                    try {
                        assertTrue(letGo.await(20, TimeUnit.SECONDS), "the test lets the endpoint go");
                    } finally {
                        deliveryEnded.set(true);
                    }
                }
            }
        };
        Activation activation = activation(sink, 3);
        Thread delivery = new Thread(() -> activation.deliver(completion(1), NOTHING), "delivery");
        delivery.start();
        assertTrue(inEndpoint.await(10, TimeUnit.SECONDS));
        AtomicBoolean endedWhenCloseReturned = new AtomicBoolean();
        CountDownLatch closed = new CountDownLatch(1);
        Thread closer = new Thread(() -> {
            activation.close();
            endedWhenCloseReturned.set(deliveryEnded.get());
            closed.countDown();
        }, "closer");
        closer.start();
        TestProbes.await("closed to new deliveries at once", Duration.ofSeconds(10),
            () -> activation.state() == Activation.State.STOPPED);
        // close must still be waiting while the endpoint runs (observed for 300 ms, not a synchronization)
        assertFalse(closed.await(300, TimeUnit.MILLISECONDS), "close returned while a delivery was running");
        activation.deliver(completion(2), NOTHING); // comes in while close waits: not delivered
        letGo.countDown();
        assertTrue(closed.await(10, TimeUnit.SECONDS), "close returned once the delivery ended");
        assertTrue(endedWhenCloseReturned.get(), "the delivery had ended when close returned");
        delivery.join(10_000);
        assertEquals(List.of(1L), sink.calls, "nothing started after close");
        assertEquals(1, activation.delivered());
        assertEquals(0, activation.inFlight());
        activation.close();
        assertEquals(List.of(true), sinkClosed, "the sink closed once, after the delivery ended");
    }

    @Test
    void deliveryAttemptsOutsideTheRangeAreRefused() {
        Listener listener = new Listener(SETTINGS, null, null, null, l -> { });
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new Activation(SETTINGS, new Scripted(), listener, 0, Runnable::run));
        assertEquals("deliveryAttempts must be from 1 to 1000, was 0", e.getMessage());
    }

    /** An executor that keeps its tasks until the test runs them. */
    private static final class Manual implements java.util.concurrent.Executor {
        final List<Runnable> tasks = new CopyOnWriteArrayList<>();

        @Override
        public void execute(Runnable task) {
            tasks.add(task);
        }

        void runAll() {
            while (!tasks.isEmpty()) {
                tasks.remove(0).run();
            }
        }
    }

    /** The number and sequence the sink saw, as "connection:sequence". */
    private static final class ByConnection extends Scripted {
        final List<String> seen = new CopyOnWriteArrayList<>();

        @Override
        public void deliver(MessageCompletion completion) throws Exception {
            seen.add(completion.connection().number() + ":" + completion.sequence());
            super.deliver(completion);
        }
    }

    @Test
    void aPausedActivationHoldsEveryEventInOrderAndTellsTheConnectionOnlyOnceResumedDeliveryHasIt() {
        ByConnection sink = new ByConnection();
        Manual catchUp = new Manual();
        Activation activation = new Activation(SETTINGS, sink, new Listener(SETTINGS, null, null, null, l -> { }), 3,
            catchUp);
        InboundConnection one = connection(1);
        InboundConnection two = connection(2);
        List<String> told = new CopyOnWriteArrayList<>();
        activation.deliver(completion(one, 1), () -> told.add("1:1"));
        assertTrue(activation.pauseDelivery());
        assertFalse(activation.pauseDelivery(), "paused already");
        assertFalse(activation.isDeliveryActive());
        activation.deliver(completion(one, 2), () -> told.add("1:2"));
        activation.deliver(completion(two, 1), () -> told.add("2:1"));
        activation.deliver(completion(one, 3), () -> told.add("1:3"));
        assertEquals(List.of("1:1"), sink.seen, "nothing is delivered while paused");
        assertEquals(List.of("1:1"), told, "the connections are not told: their receives stay unposted");
        assertEquals(3, activation.held());
        assertTrue(activation.resumeDelivery());
        assertFalse(activation.resumeDelivery(), "delivering already");
        assertEquals(2, catchUp.tasks.size(), "one catch-up per connection with events held");
        activation.deliver(completion(one, 4), () -> told.add("1:4")); // comes during the catch-up: behind the held
        activation.deliver(completion(connection(3), 1), () -> told.add("3:1")); // nothing held: at once
        assertEquals(List.of("1:1", "3:1"), sink.seen);
        catchUp.runAll();
        assertEquals(List.of("1:1", "3:1", "1:2", "1:3", "1:4", "2:1"), sink.seen, "in order per connection");
        assertEquals(sink.seen, told, "each connection told as each event was delivered");
        assertEquals(0, activation.held());
        activation.deliver(completion(one, 5), () -> told.add("1:5"));
        assertEquals("1:5", sink.seen.get(sink.seen.size() - 1), "caught up: straight to the endpoint again");
        assertEquals(7, activation.delivered());
        assertEquals(0, activation.undeliverable());
        activation.close();
    }

    @Test
    void deliveryActiveFalseStartsPausedAndAPauseDuringTheCatchUpStopsItWhereItIs() {
        ListenerSettings paused = ListenerSettings.builder().address("10.0.0.1").port(7471).deliveryActive(false)
            .build();
        ByConnection sink = new ByConnection();
        Manual catchUp = new Manual();
        Activation activation = new Activation(paused, sink, new Listener(paused, null, null, null, l -> { }), 3,
            catchUp);
        assertFalse(activation.isDeliveryActive());
        InboundConnection one = connection(1);
        activation.deliver(completion(one, 1), NOTHING);
        activation.deliver(completion(one, 2), NOTHING);
        assertEquals(List.of(), sink.seen);
        activation.resumeDelivery();
        activation.pauseDelivery(); // before the catch-up ran
        catchUp.runAll();
        assertEquals(List.of(), sink.seen, "paused again: the catch-up stops");
        assertEquals(2, activation.held());
        activation.resumeDelivery();
        catchUp.runAll();
        assertEquals(List.of("1:1", "1:2"), sink.seen);
        activation.close();
    }

    @Test
    void closingAPausedActivationCountsWhatItHeldAsUndeliverableAndTellsTheConnections() {
        ListenerSettings paused = ListenerSettings.builder().address("10.0.0.1").port(7471).deliveryActive(false)
            .build();
        ByConnection sink = new ByConnection();
        Activation activation = new Activation(paused, sink, new Listener(paused, null, null, null, l -> { }), 3,
            Runnable::run);
        AtomicInteger told = new AtomicInteger();
        activation.deliver(completion(connection(1), 1), told::incrementAndGet);
        activation.deliver(completion(connection(2), 1), told::incrementAndGet);
        activation.close();
        assertEquals(2, told.get(), "the connections may post their receives again (or go)");
        assertEquals(2, activation.undeliverable());
        assertEquals(0, activation.held());
        assertFalse(activation.resumeDelivery(), "closed");
        assertEquals(List.of(), sink.seen);
    }

    @Test
    void aResumeTheExecutorRefusesIsDeliveredOnTheResumingThread() {
        ListenerSettings paused = ListenerSettings.builder().address("10.0.0.1").port(7471).deliveryActive(false)
            .build();
        ByConnection sink = new ByConnection();
        Activation activation = new Activation(paused, sink, new Listener(paused, null, null, null, l -> { }), 3,
            task -> {
                throw new java.util.concurrent.RejectedExecutionException("saturated");
            });
        activation.deliver(completion(connection(1), 1), NOTHING);
        activation.resumeDelivery();
        assertEquals(List.of("1:1"), sink.seen);
        activation.close();
    }

    @Test
    void aPausedEndpointDoesNotDecideConnectionRequests() {
        Listener listener = new Listener(SETTINGS, null, null, null, l -> { });
        Scripted decider = new Scripted() {
            @Override
            public boolean receivesCmEvents() {
                return true;
            }
        };
        Activation activation = new Activation(SETTINGS, decider, listener, 3, Runnable::run);
        listener.add(activation);
        assertTrue(listener.hasDecider());
        activation.pauseDelivery();
        assertFalse(listener.hasDecider(), "under endpoint-decides its requests are rejected while it is paused");
        activation.resumeDelivery();
        assertTrue(listener.hasDecider());
    }
}
