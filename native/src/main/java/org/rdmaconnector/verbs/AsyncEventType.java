package org.rdmaconnector.verbs;

import org.rdmaconnector.verbs.jna.Layout;

/** {@code enum ibv_event_type}, in header order (ibv_get_async_event(3)). */
public enum AsyncEventType {
    CQ_ERR(Layout.IBV_EVENT_CQ_ERR, false),
    QP_FATAL(Layout.IBV_EVENT_QP_FATAL, false),
    QP_REQ_ERR(Layout.IBV_EVENT_QP_REQ_ERR, false),
    QP_ACCESS_ERR(Layout.IBV_EVENT_QP_ACCESS_ERR, false),
    COMM_EST(Layout.IBV_EVENT_COMM_EST, false),
    SQ_DRAINED(Layout.IBV_EVENT_SQ_DRAINED, false),
    PATH_MIG(Layout.IBV_EVENT_PATH_MIG, false),
    PATH_MIG_ERR(Layout.IBV_EVENT_PATH_MIG_ERR, false),
    DEVICE_FATAL(Layout.IBV_EVENT_DEVICE_FATAL, false),
    PORT_ACTIVE(Layout.IBV_EVENT_PORT_ACTIVE, true),
    PORT_ERR(Layout.IBV_EVENT_PORT_ERR, true),
    LID_CHANGE(Layout.IBV_EVENT_LID_CHANGE, true),
    PKEY_CHANGE(Layout.IBV_EVENT_PKEY_CHANGE, true),
    SM_CHANGE(Layout.IBV_EVENT_SM_CHANGE, true),
    SRQ_ERR(Layout.IBV_EVENT_SRQ_ERR, false),
    SRQ_LIMIT_REACHED(Layout.IBV_EVENT_SRQ_LIMIT_REACHED, false),
    QP_LAST_WQE_REACHED(Layout.IBV_EVENT_QP_LAST_WQE_REACHED, false),
    CLIENT_REREGISTER(Layout.IBV_EVENT_CLIENT_REREGISTER, true),
    GID_CHANGE(Layout.IBV_EVENT_GID_CHANGE, true),
    WQ_FATAL(Layout.IBV_EVENT_WQ_FATAL, false),
    /** A value this version does not know. */
    UNKNOWN(-1, false);

    private final int value;
    private final boolean portEvent;

    AsyncEventType(int value, boolean portEvent) {
        this.value = value;
        this.portEvent = portEvent;
    }

    /** The C enum value. */
    public int value() {
        return value;
    }

    /** Whether the event's element is a port number. */
    public boolean isPortEvent() {
        return portEvent;
    }

    /** Whether the event makes the device or a port unusable (what a pool must evict connections for). */
    public boolean isFatal() {
        return this == DEVICE_FATAL || this == PORT_ERR;
    }

    static AsyncEventType of(int value) {
        for (AsyncEventType type : values()) {
            if (type.value == value) {
                return type;
            }
        }
        return UNKNOWN;
    }
}
