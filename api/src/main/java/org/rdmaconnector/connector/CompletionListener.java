package org.rdmaconnector.connector;

/**
 * Receives the work completions of the connections a listener accepted: each message received, with its bytes,
 * each RDMA WRITE with immediate data of the peer, with its immediate data, and each completion of the connection's
 * own sends, RDMA writes and reads. As a message listener type of the resource adapter (MDBs) and as an OSGi whiteboard
 * service type. Completions of one connection arrive one at a time, in order.
 */
public interface CompletionListener {
    /** One completion; an exception is logged and counted, and the next completion is delivered as usual. */
    void onCompletion(MessageCompletion completion);
}
