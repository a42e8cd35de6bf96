package org.rdmaconnector.ra;

import jakarta.resource.spi.UnavailableException;
import jakarta.resource.spi.endpoint.MessageEndpoint;
import jakarta.resource.spi.endpoint.MessageEndpointFactory;
import java.lang.reflect.Method;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.rdmaconnector.connector.CmEventListener;
import org.rdmaconnector.connector.CompletionListener;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.spi.EndpointSink;
import org.rdmaconnector.connector.spi.EndpointUnavailableException;

/**
 * Delivers to a message endpoint factory (an MDB). An endpoint serves one delivery at a time and is kept for the
 * next (JCA lets an adapter use a proxy endpoint serially): the sink holds at most as many as ran at once, and
 * releases them when the activation closes ({@link #close()}). Creating an endpoint per event took 9 % of WildFly's
 * delivery threads' samples (BENCHMARKS.md). before/afterDelivery wrap the call when the container wants that method's
 * deliveries transacted (asked once per method). An exception from the listener or from afterDelivery (rolled back)
 * reaches the activation, which attempts the event again, and its endpoint is released, not kept; an endpoint the
 * container cannot create yet is reported as {@link EndpointUnavailableException}, and the activation waits.
 */
final class MessageEndpointSink implements EndpointSink {
    private static final Method ON_CM_EVENT = method(CmEventListener.class, "onCmEvent", ConnectionEvent.class);
    private static final Method ON_COMPLETION = method(CompletionListener.class, "onCompletion",
        MessageCompletion.class);
    private static final System.Logger LOG = System.getLogger(MessageEndpointSink.class.getName());

    private final MessageEndpointFactory factory;
    private final boolean cmEvents;
    private final boolean completions;
    private final String name;
    private final Transacted cmEventsTransacted = new Transacted(ON_CM_EVENT);
    private final Transacted completionsTransacted = new Transacted(ON_COMPLETION);
    // endpoints between deliveries, the last one used first; guarded by itself
    private final ArrayDeque<MessageEndpoint> idle = new ArrayDeque<>();
    private boolean closed; // guarded by idle

    MessageEndpointSink(MessageEndpointFactory factory) {
        this.factory = factory;
        Class<?> type = factory.getEndpointClass();
        this.cmEvents = type == null || CmEventListener.class.isAssignableFrom(type);
        this.completions = type == null || CompletionListener.class.isAssignableFrom(type);
        String activationName = factory.getActivationName();
        this.name = type != null ? type.getName() : activationName != null ? activationName : factory.toString();
    }

    private static Method method(Class<?> type, String name, Class<?> parameter) {
        try {
            return type.getMethod(name, parameter);
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean receivesCmEvents() {
        return cmEvents;
    }

    @Override
    public boolean receivesCompletions() {
        return completions;
    }

    @Override
    public void deliver(ConnectionEvent event) throws Exception {
        deliver(CmEventListener.class, cmEventsTransacted, listener -> listener.onCmEvent(event));
    }

    @Override
    public void deliver(MessageCompletion completion) throws Exception {
        deliver(CompletionListener.class, completionsTransacted, listener -> listener.onCompletion(completion));
    }

    /** One delivery on a kept or new endpoint, which is kept again if the delivery went well. */
    private <L> void deliver(Class<L> type, Transacted method, Consumer<L> call) throws Exception {
        MessageEndpoint endpoint = take();
        boolean keep = false;
        try {
            if (type.isInstance(endpoint)) {
                transacted(endpoint, method, type.cast(endpoint), call);
            }
            keep = true;
        } finally {
            giveBack(endpoint, keep);
        }
    }

    /** Releases the endpoints kept between deliveries; one still delivering is released when it is through. */
    @Override
    public void close() {
        List<MessageEndpoint> kept;
        synchronized (idle) {
            closed = true;
            kept = new ArrayList<>(idle);
            idle.clear();
        }
        kept.forEach(MessageEndpointSink::release);
    }

    private <L> void transacted(MessageEndpoint endpoint, Transacted method, L listener, Consumer<L> call)
        throws Exception {
        boolean transacted = method.ask();
        if (transacted) {
            endpoint.beforeDelivery(method.method);
        }
        try {
            call.accept(listener);
        } finally {
            if (transacted) {
                endpoint.afterDelivery();
            }
        }
    }

    /** A kept endpoint, else a new one; the waiting for one the container cannot create yet is the activation's. */
    private MessageEndpoint take() throws Exception {
        synchronized (idle) {
            MessageEndpoint endpoint = idle.pollFirst();
            if (endpoint != null) {
                return endpoint;
            }
        }
        try {
            return factory.createEndpoint(null);
        } catch (UnavailableException e) {
            throw new EndpointUnavailableException("the container cannot create an endpoint of " + name + " now: "
                + e.getMessage(), e);
        }
    }

    /** Keeps an endpoint whose delivery went well while the activation is open; releases it otherwise. */
    private void giveBack(MessageEndpoint endpoint, boolean keep) {
        if (keep) {
            synchronized (idle) {
                if (!closed) {
                    idle.addFirst(endpoint);
                    return;
                }
            }
        }
        release(endpoint);
    }

    private static void release(MessageEndpoint endpoint) {
        try {
            endpoint.release();
        } catch (RuntimeException e) { // the container's fault; the endpoint is not used again either way
            LOG.log(System.Logger.Level.WARNING, "releasing message endpoint " + endpoint + " failed", e);
        }
    }

    /** Whether the container wants a method's deliveries transacted: asked at its first delivery, then kept. */
    private final class Transacted {
        private static final int UNKNOWN = 0;
        private static final int NO = 1;
        private static final int YES = 2;
        final Method method;
        // a plain int: two first deliveries may both ask; the container's answer is the same
        private int answer = UNKNOWN;

        Transacted(Method method) {
            this.method = method;
        }

        boolean ask() throws NoSuchMethodException {
            if (answer == UNKNOWN) {
                answer = factory.isDeliveryTransacted(method) ? YES : NO;
            }
            return answer == YES;
        }
    }
}
