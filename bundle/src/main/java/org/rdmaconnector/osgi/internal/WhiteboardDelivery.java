package org.rdmaconnector.osgi.internal;

import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.rdmaconnector.connector.CmEventListener;
import org.rdmaconnector.connector.CompletionListener;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ActivationMBeans;
import org.rdmaconnector.connector.spi.EndpointSink;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.osgi.Whiteboard;

/**
 * The whiteboard: every {@link CmEventListener} and {@link CompletionListener} service with {@code rdma.address}
 * and {@code rdma.port} is activated on the shared listener hub, exactly like an MDB on the resource adapter;
 * property changes re-activate it, unregistering deactivates it.
 */
@Component(immediate = true, service = WhiteboardDelivery.class)
public class WhiteboardDelivery {
    private static final System.Logger LOG = System.getLogger(WhiteboardDelivery.class.getName());

    // by constructor: bound before the listener references, which need it at once
    private final RdmaRuntime runtime;

    @Activate
    public WhiteboardDelivery(@Reference RdmaRuntime runtime) {
        this.runtime = runtime;
    }

    private final Map<Object, Activation> activations = new ConcurrentHashMap<>();
    private final Map<Object, javax.management.ObjectName> names = new ConcurrentHashMap<>();

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
        unbind = "removeCmEventListener", updated = "updatedCmEventListener")
    void addCmEventListener(CmEventListener listener, Map<String, Object> properties) {
        activate(listener, properties);
    }

    void updatedCmEventListener(CmEventListener listener, Map<String, Object> properties) {
        deactivate(listener);
        activate(listener, properties);
    }

    void removeCmEventListener(CmEventListener listener) {
        deactivate(listener);
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
        unbind = "removeCompletionListener", updated = "updatedCompletionListener")
    void addCompletionListener(CompletionListener listener, Map<String, Object> properties) {
        activate(listener, properties);
    }

    void updatedCompletionListener(CompletionListener listener, Map<String, Object> properties) {
        deactivate(listener);
        activate(listener, properties);
    }

    void removeCompletionListener(CompletionListener listener) {
        deactivate(listener);
    }

    /** The whiteboard's activations now (for the shell commands and tests). */
    List<Activation> activations() {
        return List.copyOf(activations.values());
    }

    private void activate(Object service, Map<String, Object> properties) {
        String name = service.getClass().getName() + "#" + properties.get("service.id");
        try {
            ListenerSettings settings = ListenerSettings.of(text(properties.get(Whiteboard.ADDRESS)),
                number(properties.get(Whiteboard.PORT)), number(properties.get(Whiteboard.BACKLOG)),
                text(properties.get(Whiteboard.ACCEPT_POLICY)), text(properties.get(Whiteboard.ALLOWED_PEERS)),
                number(properties.get(Whiteboard.RECEIVE_BUFFER_COUNT)),
                number(properties.get(Whiteboard.RECEIVE_BUFFER_SIZE)),
                number(properties.get(Whiteboard.MAX_CONCURRENT_DELIVERIES)));
            Activation activation = runtime.hub().activate(settings, new ServiceSink(service, name));
            activations.put(service, activation);
            javax.management.ObjectName shown = ActivationMBeans.register(activation);
            if (shown != null) {
                names.put(service, shown);
            }
        } catch (IllegalArgumentException e) {
            LOG.log(Level.ERROR, "RDMA whiteboard service " + name + " is not activated: " + e.getMessage());
        }
    }

    private void deactivate(Object service) {
        Activation activation = activations.remove(service);
        if (activation != null) {
            activation.close();
        }
        ActivationMBeans.unregister(names.remove(service));
    }

    @Deactivate
    void stop() {
        activations.values().forEach(Activation::close);
        activations.clear();
        names.values().forEach(ActivationMBeans::unregister);
        names.clear();
    }

    private static String text(Object value) {
        return value == null ? null : value.toString();
    }

    private static Integer number(Object value) {
        if (value == null) {
            return null;
        }
        if (value instanceof Number n) {
            return n.intValue();
        }
        try {
            return Integer.valueOf(value.toString().trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + value + "' is not a number", e);
        }
    }

    /** Delivers to a whiteboard service. */
    private record ServiceSink(Object service, String name) implements EndpointSink {
        @Override
        public boolean receivesCmEvents() {
            return service instanceof CmEventListener;
        }

        @Override
        public boolean receivesCompletions() {
            return service instanceof CompletionListener;
        }

        @Override
        public void deliver(ConnectionEvent event) {
            ((CmEventListener) service).onCmEvent(event);
        }

        @Override
        public void deliver(MessageCompletion completion) {
            ((CompletionListener) service).onCompletion(completion);
        }
    }
}
