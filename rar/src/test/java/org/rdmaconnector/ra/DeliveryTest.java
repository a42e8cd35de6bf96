package org.rdmaconnector.ra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.resource.spi.UnavailableException;
import jakarta.resource.spi.endpoint.MessageEndpoint;
import jakarta.resource.spi.endpoint.MessageEndpointFactory;
import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import javax.transaction.xa.XAResource;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.CompletionListener;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.spi.EndpointUnavailableException;

/**
 * The adapter's side of delivery on the host: an endpoint the container cannot create yet is reported as
 * unavailable (the activation waits; nothing here sleeps), an endpoint is kept for the next delivery and released
 * when the activation closes, a failing endpoint's exception reaches the activation (which attempts again) and the
 * endpoint is released, and a WorkManager that refuses is told to the caller at once.
 */
class DeliveryTest {
    // the sink only hands it to the endpoint: no method of it is called
    private static final MessageCompletion RECEIVE = (MessageCompletion) java.lang.reflect.Proxy.newProxyInstance(
        DeliveryTest.class.getClassLoader(), new Class<?>[] {MessageCompletion.class},
        (proxy, method, args) -> method.getName().equals("toString") ? "receive 1" : null);

    /** {@code factory}, except that its first {@code unavailable} endpoints cannot be created. */
    private static MessageEndpointFactory unavailableAtFirst(MessageEndpointFactory factory, int unavailable) {
        AtomicInteger refused = new AtomicInteger();
        return new MessageEndpointFactory() {
            @Override
            public MessageEndpoint createEndpoint(XAResource xa) throws UnavailableException {
                if (refused.getAndIncrement() < unavailable) {
                    throw new UnavailableException("the application is still starting");
                }
                return factory.createEndpoint(xa);
            }

            @Override
            public MessageEndpoint createEndpoint(XAResource xa, long timeout) throws UnavailableException {
                return createEndpoint(xa);
            }

            @Override
            public boolean isDeliveryTransacted(Method method) throws NoSuchMethodException {
                return factory.isDeliveryTransacted(method);
            }

            @Override
            public String getActivationName() {
                return factory.getActivationName();
            }

            @Override
            public Class<?> getEndpointClass() {
                return CompletionListener.class;
            }
        };
    }

    @Test
    void anEndpointTheContainerCannotCreateYetIsReportedUnavailableUntilItCan() throws Exception {
        FakeContainer.Endpoints seen = new FakeContainer.Endpoints();
        MessageEndpointSink sink = new MessageEndpointSink(unavailableAtFirst(
            FakeContainer.factory(CompletionListener.class, true, seen, args -> { }), 2));
        for (int i = 0; i < 2; i++) {
            EndpointUnavailableException e = assertThrows(EndpointUnavailableException.class,
                () -> sink.deliver(RECEIVE));
            assertInstanceOf(UnavailableException.class, e.getCause());
            assertTrue(e.getMessage().startsWith("the container cannot create an endpoint of "
                + CompletionListener.class.getName() + " now: "), e.getMessage());
        }
        sink.deliver(RECEIVE);
        assertEquals(List.of("beforeDelivery", "onCompletion", "afterDelivery"), seen.calls);
        assertEquals(1, seen.created.get());
        assertEquals(0, seen.released.get(), "kept for the next delivery");
        sink.close();
        assertEquals(1, seen.released.get());
    }

    @Test
    void anEndpointIsKeptForTheNextDeliveryAndReleasedWhenTheActivationCloses() throws Exception {
        FakeContainer.Endpoints seen = new FakeContainer.Endpoints();
        MessageEndpointSink sink = new MessageEndpointSink(FakeContainer.factory(CompletionListener.class, true, seen,
            args -> { }));
        for (int i = 0; i < 3; i++) {
            sink.deliver(RECEIVE);
        }
        assertEquals(1, seen.created.get(), "one endpoint for three deliveries in turn");
        assertEquals(0, seen.released.get());
        assertEquals(1, seen.transactedAsked.get(), "the container is asked once per method");
        assertEquals(9, seen.calls.size(), "before, onCompletion and after for each: " + seen.calls);
        sink.close();
        assertEquals(1, seen.released.get());
        sink.close();
        assertEquals(1, seen.released.get(), "released once");
    }

    @Test
    void deliveriesAtOnceEachHaveAnEndpointAndAllAreKept() throws Exception {
        FakeContainer.Endpoints seen = new FakeContainer.Endpoints();
        AtomicInteger depth = new AtomicInteger();
        MessageEndpointSink[] sink = new MessageEndpointSink[1];
        // the first delivery runs a second one inside it: two deliveries at once, as on two delivery threads
        sink[0] = new MessageEndpointSink(FakeContainer.factory(CompletionListener.class, false, seen, args -> {
            if (depth.incrementAndGet() == 1) {
                try {
                    sink[0].deliver(RECEIVE);
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }
        }));
        sink[0].deliver(RECEIVE);
        assertEquals(2, seen.created.get());
        depth.set(10);
        sink[0].deliver(RECEIVE);
        sink[0].deliver(RECEIVE);
        assertEquals(2, seen.created.get(), "both kept");
        assertEquals(0, seen.released.get());
        sink[0].close();
        assertEquals(2, seen.released.get());
    }

    @Test
    void anEndpointStillDeliveringWhenTheActivationClosesIsReleasedWhenItIsThrough() throws Exception {
        FakeContainer.Endpoints seen = new FakeContainer.Endpoints();
        MessageEndpointSink[] sink = new MessageEndpointSink[1];
        sink[0] = new MessageEndpointSink(FakeContainer.factory(CompletionListener.class, false, seen,
            args -> sink[0].close()));
        sink[0].deliver(RECEIVE);
        assertEquals(1, seen.created.get());
        assertEquals(1, seen.released.get(), "not kept by a closed sink");
    }

    @Test
    void aReleaseThatFailsIsNotADeliveryThatFailed() throws Exception {
        FakeContainer.Endpoints seen = new FakeContainer.Endpoints();
        seen.releaseFails = true;
        MessageEndpointSink sink = new MessageEndpointSink(FakeContainer.factory(CompletionListener.class, false, seen,
            args -> { }));
        sink.deliver(RECEIVE);
        sink.close(); // the kept endpoint's release throws: logged
        assertEquals(1, seen.released.get());
        sink.deliver(RECEIVE); // delivered, then released by the closed sink, which throws: not the delivery's fault
        assertEquals(List.of("onCompletion", "onCompletion"), seen.calls);
        assertEquals(2, seen.released.get());
    }

    @Test
    void aFailingEndpointsExceptionReachesTheActivationAndTheEndpointIsReleased() {
        FakeContainer.Endpoints seen = new FakeContainer.Endpoints();
        MessageEndpointSink sink = new MessageEndpointSink(FakeContainer.factory(CompletionListener.class, true, seen,
            args -> {
                throw new IllegalStateException("the MDB failed");
            }));
        assertThrows(IllegalStateException.class, () -> sink.deliver(RECEIVE));
        assertEquals(List.of("beforeDelivery", "onCompletion", "afterDelivery"), seen.calls);
        assertEquals(1, seen.released.get());
        assertThrows(IllegalStateException.class, () -> sink.deliver(RECEIVE));
        assertEquals(2, seen.created.get(), "a failed endpoint is not used again");
        assertEquals(2, seen.released.get());
    }

    @Test
    void aWorkManagerThatRefusesIsToldToTheCallerAtOnceWithoutRetrying() throws Exception {
        FakeContainer container = new FakeContainer();
        WorkManagerExecutors executors = new WorkManagerExecutors(container);
        try {
            container.refusing = true;
            RejectedExecutionException delivery = assertThrows(RejectedExecutionException.class,
                () -> executors.delivery().execute(() -> { }));
            assertTrue(delivery.getMessage().startsWith("the WorkManager refused the rdma-delivery Work: "),
                delivery.getMessage());
            assertEquals(1, container.scheduled.get(), "one attempt: the caller (the event loop) must not wait");
            assertThrows(RejectedExecutionException.class, () -> executors.later(() -> { }));
            assertEquals(2, container.scheduled.get());
            container.refusing = false;
            java.util.concurrent.CountDownLatch ran = new java.util.concurrent.CountDownLatch(1);
            executors.later(ran::countDown);
            assertTrue(ran.await(10, java.util.concurrent.TimeUnit.SECONDS));
        } finally {
            executors.close();
        }
    }
}
