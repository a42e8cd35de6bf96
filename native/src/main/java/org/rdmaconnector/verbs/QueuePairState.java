package org.rdmaconnector.verbs;

import org.rdmaconnector.verbs.jna.Layout;

/** The state of a queue pair ({@code enum ibv_qp_state}, ibv_modify_qp(3)). */
public enum QueuePairState {
    /** Created, or reset: nothing is processed. */
    RESET(Layout.IBV_QPS_RESET),
    /** Initialized: receives may be posted, nothing is processed yet. */
    INIT(Layout.IBV_QPS_INIT),
    /** Ready to receive. */
    RTR(Layout.IBV_QPS_RTR),
    /** Ready to send: the state of an established connection. */
    RTS(Layout.IBV_QPS_RTS),
    /** Send queue drained. */
    SQD(Layout.IBV_QPS_SQD),
    /** Send queue error (not for reliable connections). */
    SQE(Layout.IBV_QPS_SQE),
    /** Error: every posted request is flushed. */
    ERR(Layout.IBV_QPS_ERR),
    /** A value this binding does not know. */
    UNKNOWN(-1);

    private final int value;

    QueuePairState(int value) {
        this.value = value;
    }

    /** The state a C value names, {@link #UNKNOWN} for any other. */
    public static QueuePairState of(int value) {
        for (QueuePairState state : values()) {
            if (state.value == value) {
                return state;
            }
        }
        return UNKNOWN;
    }
}
