package org.rdmaconnector.osgi.internal;

import java.lang.System.Logger.Level;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.management.ObjectName;
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
 * and {@code rdma.port} is activated on the shared listener hub, exactly like an MDB on the resource adapter. A
 * service registered under both types is one activation that gets both kinds of events; a change of its
 * {@code rdma.*} properties re-activates it, unregistering deactivates it.
 */
@Component(immediate = true, service = WhiteboardDelivery.class)
public class WhiteboardDelivery {
    private static final System.Logger LOG = System.getLogger(WhiteboardDelivery.class.getName());
    private static final String OBJECT_CLASS = "objectClass";
    private static final String SERVICE_ID = "service.id";

    // by constructor: bound before the listener references, which need it at once
    private final RdmaRuntime runtime;
    /** By service id; an entry without activation is a service whose properties were refused (logged once). */
    private final Map<Object, Entry> entries = new ConcurrentHashMap<>();
    /**
     * One lock per service id: the callbacks of one service run one at a time (an update closes the old activation
     * before it makes the new one), while another service's bind need not wait for a slow close.
     */
    private final Map<Object, Object> locks = new ConcurrentHashMap<>();

    @Activate
    public WhiteboardDelivery(@Reference RdmaRuntime runtime) {
        this.runtime = runtime;
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
        unbind = "removeCmEventListener", updated = "updatedCmEventListener")
    void addCmEventListener(CmEventListener listener, Map<String, Object> properties) {
        bind(listener, properties);
    }

    void updatedCmEventListener(CmEventListener listener, Map<String, Object> properties) {
        update(listener, properties);
    }

    void removeCmEventListener(CmEventListener listener, Map<String, Object> properties) {
        unbind(properties);
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
        unbind = "removeCompletionListener", updated = "updatedCompletionListener")
    void addCompletionListener(CompletionListener listener, Map<String, Object> properties) {
        bind(listener, properties);
    }

    void updatedCompletionListener(CompletionListener listener, Map<String, Object> properties) {
        update(listener, properties);
    }

    void removeCompletionListener(CompletionListener listener, Map<String, Object> properties) {
        unbind(properties);
    }

    // The second bind of a service registered under both types finds its entry.
    private void bind(Object service, Map<String, Object> properties) {
        Object id = properties.get(SERVICE_ID);
        synchronized (lockOf(id)) {
            if (!entries.containsKey(id)) {
                entries.put(id, activate(service, properties));
            }
        }
    }

    // Both references report each update: re-activate only when what the activation was made from changed.
    private void update(Object service, Map<String, Object> properties) {
        Object id = properties.get(SERVICE_ID);
        synchronized (lockOf(id)) {
            Entry entry = entries.get(id);
            if (entry != null && entry.key().equals(Entry.keyOf(properties))) {
                return;
            }
            if (entry != null) {
                entries.remove(id);
                entry.close();
            }
            entries.put(id, activate(service, properties));
        }
    }

    // The second unbind of a service registered under both types finds nothing left.
    private void unbind(Map<String, Object> properties) {
        Object id = properties.get(SERVICE_ID);
        synchronized (lockOf(id)) {
            Entry entry = entries.remove(id);
            if (entry != null) {
                entry.close();
            }
        }
        locks.remove(id);
    }

    private Object lockOf(Object serviceId) {
        return locks.computeIfAbsent(serviceId, id -> new Object());
    }

    private Entry activate(Object service, Map<String, Object> properties) {
        String name = service.getClass().getName() + "#" + properties.get(SERVICE_ID);
        List<String> types = properties.get(OBJECT_CLASS) instanceof String[] classes ? Arrays.asList(classes)
            : List.of();
        boolean cmEvents = service instanceof CmEventListener && types.contains(CmEventListener.class.getName());
        boolean completions = service instanceof CompletionListener
            && types.contains(CompletionListener.class.getName());
        try {
            ListenerSettings settings = ListenerSettings.builder().address(text(properties.get(Whiteboard.ADDRESS)))
                .port(number(properties, Whiteboard.PORT)).backlog(number(properties, Whiteboard.BACKLOG))
                .acceptPolicy(text(properties.get(Whiteboard.ACCEPT_POLICY)))
                .allowedPeers(text(properties.get(Whiteboard.ALLOWED_PEERS)))
                .receiveBufferCount(number(properties, Whiteboard.RECEIVE_BUFFER_COUNT))
                .receiveBufferSize(number(properties, Whiteboard.RECEIVE_BUFFER_SIZE))
                .maxConcurrentDeliveries(number(properties, Whiteboard.MAX_CONCURRENT_DELIVERIES))
                .maxConnections(number(properties, Whiteboard.MAX_CONNECTIONS))
                .maxConnectionsPerPeer(number(properties, Whiteboard.MAX_CONNECTIONS_PER_PEER))
                .idleTimeoutSeconds(number(properties, Whiteboard.IDLE_TIMEOUT_SECONDS))
                .deliveryAttempts(number(properties, Whiteboard.DELIVERY_ATTEMPTS))
                .ackTimeout(number(properties, Whiteboard.ACK_TIMEOUT))
                .minRnrTimerMicros(number(properties, Whiteboard.MIN_RNR_TIMER_MICROS))
                .setupDefaults(runtime.setupDefaults())
                .setupIntervalMillis(number(properties, Whiteboard.SETUP_INTERVAL_MILLIS))
                .setupMaxIntervalMillis(number(properties, Whiteboard.SETUP_MAX_INTERVAL_MILLIS))
                .setupAttempts(number(properties, Whiteboard.SETUP_ATTEMPTS))
                .deliveryActive(bool(properties, Whiteboard.DELIVERY_ACTIVE))
                .deliverSendCompletions(bool(properties, Whiteboard.DELIVER_SEND_COMPLETIONS))
                .build();
            Activation activation = runtime.hub().activate(settings,
                new ServiceSink(service, name, cmEvents, completions));
            return new Entry(Entry.keyOf(properties), activation, ActivationMBeans.register(activation));
        } catch (IllegalArgumentException e) {
            LOG.log(Level.ERROR, "RDMA whiteboard service " + name + " is not activated: " + e.getMessage());
            return new Entry(Entry.keyOf(properties), null, null);
        }
    }

    @Deactivate
    void stop() {
        for (Object id : List.copyOf(entries.keySet())) {
            unbind(Map.of(SERVICE_ID, id));
        }
    }

    private static String text(Object value) {
        return value == null ? null : value.toString();
    }

    private static Integer number(Map<String, Object> properties, String name) {
        Object value = properties.get(name);
        if (value == null) {
            return null;
        }
        if (value instanceof Number n) {
            return n.intValue();
        }
        try {
            return Integer.valueOf(value.toString().trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " '" + value + "' is not a number", e);
        }
    }

    private static Boolean bool(Map<String, Object> properties, String name) {
        Object value = properties.get(name);
        if (value == null || value instanceof Boolean) {
            return (Boolean) value;
        }
        String text = value.toString().trim();
        if (text.equalsIgnoreCase("true") || text.equalsIgnoreCase("false")) {
            return Boolean.valueOf(text);
        }
        throw new IllegalArgumentException(name + " '" + value + "' is not true or false");
    }

    /** A whiteboard service's activation (null when refused), its MBean name, and the properties it came from. */
    private record Entry(Map<String, String> key, Activation activation, ObjectName shown) {
        private static final List<String> SETTINGS = List.of(Whiteboard.ADDRESS, Whiteboard.PORT,
            Whiteboard.BACKLOG, Whiteboard.ACCEPT_POLICY, Whiteboard.ALLOWED_PEERS, Whiteboard.RECEIVE_BUFFER_COUNT,
            Whiteboard.RECEIVE_BUFFER_SIZE, Whiteboard.MAX_CONCURRENT_DELIVERIES, Whiteboard.MAX_CONNECTIONS,
            Whiteboard.MAX_CONNECTIONS_PER_PEER, Whiteboard.IDLE_TIMEOUT_SECONDS, Whiteboard.DELIVERY_ATTEMPTS,
            Whiteboard.ACK_TIMEOUT, Whiteboard.MIN_RNR_TIMER_MICROS, Whiteboard.DELIVERY_ACTIVE,
            Whiteboard.DELIVER_SEND_COMPLETIONS, Whiteboard.SETUP_INTERVAL_MILLIS, Whiteboard.SETUP_MAX_INTERVAL_MILLIS,
            Whiteboard.SETUP_ATTEMPTS);

        /** The whiteboard properties as text: what an activation is made from. */
        static Map<String, String> keyOf(Map<String, Object> properties) {
            Map<String, String> key = new HashMap<>();
            for (String name : SETTINGS) {
                Object value = properties.get(name);
                if (value != null) {
                    key.put(name, value instanceof Object[] array ? Arrays.deepToString(array) : value.toString());
                }
            }
            return key;
        }

        void close() {
            if (activation != null) {
                activation.close();
            }
            ActivationMBeans.unregister(shown);
        }
    }

    /** Delivers to a whiteboard service the kinds of events it is registered for. */
    private record ServiceSink(Object service, String name, boolean receivesCmEvents, boolean receivesCompletions)
        implements EndpointSink {
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
