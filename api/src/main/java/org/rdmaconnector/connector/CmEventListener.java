package org.rdmaconnector.connector;

/**
 * Receives the RDMA CM events of a listener: CONNECT_REQUEST, ESTABLISHED, DISCONNECTED and the errors of the
 * connections it accepted. As a message listener type of the resource adapter (MDBs) and as an OSGi whiteboard
 * service type. Events of one connection arrive one at a time, in order.
 */
public interface CmEventListener {
    /** One CM event; an exception is logged and counted, and the next event is delivered as usual. */
    void onCmEvent(ConnectionEvent event);
}
