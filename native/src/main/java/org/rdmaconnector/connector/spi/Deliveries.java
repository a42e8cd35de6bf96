package org.rdmaconnector.connector.spi;

import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;

/** Where a listener's connections hand their CM events and completions: the activations on the listener. */
interface Deliveries {
    /** Delivers {@code event} to every endpoint that receives CM events; returns when they have returned. */
    void deliver(ConnectionEvent event);

    /** Delivers {@code completion} to every endpoint that receives completions; returns when they have returned. */
    void deliver(MessageCompletion completion);

    /** Whether an endpoint is there to decide a pending CONNECT_REQUEST. */
    boolean hasDecider();
}
