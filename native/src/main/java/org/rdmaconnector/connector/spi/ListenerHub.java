package org.rdmaconnector.connector.spi;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.rdmaconnector.verbs.engine.EventEngine;

/**
 * The listeners of one connector instance: endpoints activated on the same address and port share one listening
 * CM id, its accepted connections and their completions. Activating never fails for a missing device: the listener
 * then waits and retries with backoff (see {@link Activation#state()}). Thread-safe.
 */
public final class ListenerHub implements AutoCloseable {
    private final DeviceRegistry devices;
    private final EventEngine engine;
    private final Scheduler scheduler;
    private final Map<String, Listener> listeners = new HashMap<>();
    private boolean closed;

    /**
     * @param devices the shared device contexts
     * @param engine reads the listeners' channels and runs deliveries on its executor
     * @param scheduler runs retries and disconnect deadlines
     */
    public ListenerHub(DeviceRegistry devices, EventEngine engine, Scheduler scheduler) {
        this.devices = devices;
        this.engine = engine;
        this.scheduler = scheduler;
    }

    /**
     * Activates {@code sink} on the listener of {@code settings}' address and port, starting it if it is the first.
     *
     * @throws IllegalArgumentException when the settings are invalid, or differ (other than in delivery concurrency)
     *     from those of the endpoints already on that address
     */
    public Activation activate(ListenerSettings settings, EndpointSink sink) {
        settings.validate();
        if (sink == null) {
            throw new IllegalArgumentException("sink must not be null");
        }
        Listener listener;
        Activation activation;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("ListenerHub is closed");
            }
            String key = keyOf(settings);
            listener = listeners.get(key);
            if (listener != null && listener.isStopped()) {
                listener = null; // its last activation closed and it is stopping: start a new one
            }
            if (listener != null && !listener.settings().sharesListenerWith(settings)) {
                throw new IllegalArgumentException("endpoint " + sink.name() + " asks for " + describe(settings)
                    + ", and the endpoints already on " + key + " use " + describe(listener.settings())
                    + "; endpoints on one address must agree on all but MaxConcurrentDeliveries");
            }
            if (listener == null) {
                listener = new Listener(settings, devices, engine, scheduler, this::forget);
                listeners.put(key, listener);
            }
            activation = new Activation(settings, sink, listener, engine.deliveryExecutor());
            listener.add(activation);
        }
        listener.startIfIdle();
        return activation;
    }

    private static String describe(ListenerSettings s) {
        return "backlog " + s.backlog() + ", policy " + s.acceptPolicy().text() + ", peers " + s.allowedPeers()
            + ", " + s.receiveBufferCount() + " x " + s.receiveBufferSize() + " byte buffers";
    }

    /** One key per address however it is written ({@code ::ffff:10.0.0.1} is {@code 10.0.0.1}) and port. */
    private static String keyOf(ListenerSettings settings) {
        return Cidr.canonical(settings.address()) + ":" + settings.port();
    }

    /** Called by a listener that stopped: a new one may already stand under its key. */
    private synchronized void forget(Listener stopped) {
        listeners.remove(keyOf(stopped.settings()), stopped);
    }

    /** The activations of every listener. */
    public synchronized List<Activation> activations() {
        List<Activation> all = new ArrayList<>();
        for (Listener listener : listeners.values()) {
            all.addAll(listener.activations());
        }
        return all;
    }

    /** Deactivates everything and stops every listener. */
    @Override
    public void close() {
        List<Listener> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(listeners.values());
        }
        for (Listener listener : all) {
            for (Activation activation : listener.activations()) {
                activation.close();
            }
            listener.stop();
        }
    }
}
