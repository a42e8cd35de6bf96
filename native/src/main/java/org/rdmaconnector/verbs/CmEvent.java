package org.rdmaconnector.verbs;

import org.rdmaconnector.connector.CmEventType;

/**
 * A communication manager event ({@code struct rdma_cm_event}, rdma_get_cm_event(3)). Everything in it was copied
 * before the event was acknowledged (rdma_ack_cm_event(3)), so it stays valid and nothing is left to ack.
 *
 * @param type the event type
 * @param status 0, a negative errno (ADDR_ERROR, ROUTE_ERROR, UNREACHABLE, CONNECT_ERROR), or for REJECTED the
 *               transport's reject reason (28 = rejected by the consumer, i.e. rdma_reject)
 * @param id the id the event is for; for CONNECT_REQUEST a new id for the incoming connection, on the same channel
 * @param listenId for CONNECT_REQUEST the listening id, otherwise null
 * @param parameters the connection parameters with the peer's private data (CONNECT_REQUEST, CONNECT_RESPONSE,
 *                   ESTABLISHED, REJECTED on connected ids), otherwise null
 */
public record CmEvent(CmEventType type, int status, CmId id, CmId listenId, ConnectionParameters parameters) {
    /** The peer's private data; empty when the event has none. */
    public byte[] privateData() {
        return parameters == null ? new byte[0] : parameters.privateData();
    }

    @Override
    public String toString() {
        return "CmEvent[" + type + (status != 0 ? ", status " + status : "") + ", " + id + "]";
    }
}
