package org.rdmaconnector.connector;

/** {@code enum rdma_cm_event_type}, in header order (rdma_get_cm_event(3)). */
public enum CmEventType {
    ADDR_RESOLVED,
    ADDR_ERROR,
    ROUTE_RESOLVED,
    ROUTE_ERROR,
    CONNECT_REQUEST,
    CONNECT_RESPONSE,
    CONNECT_ERROR,
    UNREACHABLE,
    REJECTED,
    ESTABLISHED,
    DISCONNECTED,
    DEVICE_REMOVAL,
    MULTICAST_JOIN,
    MULTICAST_ERROR,
    ADDR_CHANGE,
    TIMEWAIT_EXIT;

    private static final CmEventType[] VALUES = values();

    /** The C enum value. */
    public int value() {
        return ordinal();
    }

    /** The type of C value {@code value}; null for one this version does not know. */
    public static CmEventType of(int value) {
        return value >= 0 && value < VALUES.length ? VALUES[value] : null;
    }

    /** Whether the event reports a failure of the operation in progress. */
    public boolean isError() {
        return this == ADDR_ERROR || this == ROUTE_ERROR || this == CONNECT_ERROR || this == UNREACHABLE
            || this == REJECTED || this == MULTICAST_ERROR || this == DEVICE_REMOVAL;
    }
}
