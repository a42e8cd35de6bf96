package org.rdmaconnector.connector;

/**
 * Receives the work completions of the connections a listener accepted: each message received, with its bytes,
 * and each send completion. As a message listener type of the resource adapter (MDBs) and as an OSGi whiteboard
 * service type. Completions of one connection arrive one at a time, in order.
 */
public interface CompletionListener {
    /** One completion; an exception is logged and counted, and the next completion is delivered as usual. */
    void onCompletion(MessageCompletion completion);
}
