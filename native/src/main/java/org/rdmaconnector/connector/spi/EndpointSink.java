package org.rdmaconnector.connector.spi;

import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;

/**
 * Where one activation's events go: a JCA message endpoint factory, an OSGi whiteboard service. Called on delivery
 * threads; events of one connection one at a time, in order. An exception is logged and counted by the hub.
 */
public interface EndpointSink {
    /** A name for logs and state reports (the endpoint's, the service's). */
    String name();

    /** Whether the endpoint takes CM events ({@link org.rdmaconnector.connector.CmEventListener}). */
    boolean receivesCmEvents();

    /** Whether the endpoint takes completions ({@link org.rdmaconnector.connector.CompletionListener}). */
    boolean receivesCompletions();

    /** Delivers a CM event. */
    void deliver(ConnectionEvent event) throws Exception;

    /** Delivers a completion. */
    void deliver(MessageCompletion completion) throws Exception;

    /**
     * The activation is closed and its deliveries have ended (or the bounded wait for them gave up): frees what the
     * sink keeps between deliveries. Called once; a delivery still running afterwards frees its own. Nothing by
     * default.
     */
    default void close() {
    }
}
