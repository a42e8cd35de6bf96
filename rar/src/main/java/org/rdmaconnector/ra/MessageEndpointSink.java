package org.rdmaconnector.ra;

import jakarta.resource.spi.UnavailableException;
import jakarta.resource.spi.endpoint.MessageEndpoint;
import jakarta.resource.spi.endpoint.MessageEndpointFactory;
import java.lang.reflect.Method;
import org.rdmaconnector.connector.CmEventListener;
import org.rdmaconnector.connector.CompletionListener;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.spi.EndpointSink;
import org.rdmaconnector.connector.spi.EndpointUnavailableException;

/**
 * Delivers to a message endpoint factory (an MDB): a fresh endpoint per event, before/afterDelivery when the
 * container wants the delivery transacted, and the endpoint released every time. An exception from the listener
 * or from afterDelivery (rolled back) reaches the activation, which attempts the event again; an endpoint the
 * container cannot create yet is reported as {@link EndpointUnavailableException}, and the activation waits.
 */
final class MessageEndpointSink implements EndpointSink {
    private static final Method ON_CM_EVENT = method(CmEventListener.class, "onCmEvent", ConnectionEvent.class);
    private static final Method ON_COMPLETION = method(CompletionListener.class, "onCompletion",
        MessageCompletion.class);

    private final MessageEndpointFactory factory;
    private final boolean cmEvents;
    private final boolean completions;
    private final String name;

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
        MessageEndpoint endpoint = create();
        try {
            if (endpoint instanceof CmEventListener listener) {
                transacted(endpoint, ON_CM_EVENT, () -> listener.onCmEvent(event));
            }
        } finally {
            endpoint.release();
        }
    }

    @Override
    public void deliver(MessageCompletion completion) throws Exception {
        MessageEndpoint endpoint = create();
        try {
            if (endpoint instanceof CompletionListener listener) {
                transacted(endpoint, ON_COMPLETION, () -> listener.onCompletion(completion));
            }
        } finally {
            endpoint.release();
        }
    }

    private void transacted(MessageEndpoint endpoint, Method method, Runnable call) throws Exception {
        boolean transacted = factory.isDeliveryTransacted(method);
        if (transacted) {
            endpoint.beforeDelivery(method);
        }
        try {
            call.run();
        } finally {
            if (transacted) {
                endpoint.afterDelivery();
            }
        }
    }

    /** A new endpoint; the waiting for one the container cannot create yet is the activation's (it can be closed). */
    private MessageEndpoint create() throws Exception {
        try {
            return factory.createEndpoint(null);
        } catch (UnavailableException e) {
            throw new EndpointUnavailableException("the container cannot create an endpoint of " + name + " now: "
                + e.getMessage(), e);
        }
    }
}
