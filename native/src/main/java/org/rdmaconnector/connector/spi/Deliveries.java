package org.rdmaconnector.connector.spi;

import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;

/**
 * Where a listener's connections hand their CM events and completions: the activations on the listener. An
 * activation that is paused holds what it is given; {@code done} tells the connection when every endpoint has it.
 */
interface Deliveries {
    /**
     * What a delivery runs once every endpoint given it is through with it. The connector's own: not a
     * {@link Runnable}, so that a listener cannot end a delivery (the completion it is given is its delivery's
     * {@code Done} too, {@link Through}).
     */
    @FunctionalInterface
    interface Done {
        /** The delivery is through. */
        void run();
    }

    /**
     * Delivers {@code event} to every endpoint that receives CM events; {@code done} runs once each has returned
     * from it (before this returns, unless an endpoint is paused and holds it: then on resume or deactivation).
     */
    void deliver(ConnectionEvent event, Done done);

    /** Delivers {@code completion} to every endpoint that receives completions; {@code done} as for events. */
    void deliver(MessageCompletion completion, Done done);

    /** Whether an endpoint is there, and delivering (not paused), to decide a pending CONNECT_REQUEST. */
    boolean hasDecider();
}
