package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

/**
 * An activation's delivery on the host, with a stand-in sink and a listener that was never started (it touches no
 * device until then): a failing delivery is attempted again and then counted, an unavailable endpoint holds the
 * delivery until it is available, closing ends that wait at once, and close returns only once the delivery running
 * has ended.
 */
@Timeout(30)
class ActivationTest {
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
        return new Activation(SETTINGS, sink, new Listener(SETTINGS, null, null, null, l -> { }), attempts);
    }

    private static EndpointUnavailableException unavailable() {
        return new EndpointUnavailableException("the application is starting", null);
    }

    private static MessageCompletion completion(long sequence) {
        return new MessageCompletion() {
            @Override
            public InboundConnection connection() {
                return null;
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
        activation.deliver(completion(1));
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
        Activation activation = new Activation(SETTINGS, sink, new Listener(SETTINGS, null, null, null, l -> { }));
        activation.deliver(completion(1));
        assertEquals(List.of(1L, 1L, 1L), sink.calls, "the default is " + ListenerSettings.DEFAULT_DELIVERY_ATTEMPTS);
        assertEquals(0, activation.delivered());
        assertEquals(3, activation.errors());
        assertEquals(1, activation.undeliverable());
        activation.deliver(completion(2));
        assertEquals(1, activation.delivered());
        assertTrue(activation.toString().endsWith("1 delivered, 3 errors, 1 undeliverable]"), activation.toString());
        activation.close();
    }

    @Test
    void anUnavailableEndpointHoldsTheDeliveryUntilItIsAvailableWithoutUsingUpAttempts() {
        Scripted sink = new Scripted(unavailable(), unavailable());
        Activation activation = activation(sink, 1);
        activation.deliver(completion(7)); // held on this thread: 250 ms, then 500 ms
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
            activation.deliver(completion(1));
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
        activation.deliver(completion(2));
        assertFalse(sink.calls.contains(2L), "nothing is delivered after close");
    }

    @Test
    void closeReturnsOnlyWhenTheDeliveryRunningHasEndedAndNoneStartsAfterIt() throws Exception {
        CountDownLatch inEndpoint = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        AtomicBoolean deliveryEnded = new AtomicBoolean();
        Scripted sink = new Scripted() {
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
        Thread delivery = new Thread(() -> activation.deliver(completion(1)), "delivery");
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
        // close must still be waiting while the endpoint runs (observed for 300 ms, not a synchronization)
        assertFalse(closed.await(300, TimeUnit.MILLISECONDS), "close returned while a delivery was running");
        assertEquals(Activation.State.STOPPED, activation.state(), "closed to new deliveries at once");
        activation.deliver(completion(2)); // comes in while close waits: not delivered
        letGo.countDown();
        assertTrue(closed.await(10, TimeUnit.SECONDS), "close returned once the delivery ended");
        assertTrue(endedWhenCloseReturned.get(), "the delivery had ended when close returned");
        delivery.join(10_000);
        assertEquals(List.of(1L), sink.calls, "nothing started after close");
        assertEquals(1, activation.delivered());
        assertEquals(0, activation.inFlight());
    }

    @Test
    void deliveryAttemptsOutsideTheRangeAreRefused() {
        Listener listener = new Listener(SETTINGS, null, null, null, l -> { });
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new Activation(SETTINGS, new Scripted(), listener, 0));
        assertEquals("deliveryAttempts must be from 1 to 1000, was 0", e.getMessage());
    }
}
