package org.rdmaconnector.verbs;

import org.rdmaconnector.verbs.jna.Layout;

/** The operation of a work completion ({@code enum ibv_wc_opcode}). */
public enum WcOpcode {
    SEND(Layout.IBV_WC_SEND),
    RDMA_WRITE(Layout.IBV_WC_RDMA_WRITE),
    RDMA_READ(Layout.IBV_WC_RDMA_READ),
    RECV(Layout.IBV_WC_RECV),
    RECV_RDMA_WITH_IMM(Layout.IBV_WC_RECV_RDMA_WITH_IMM),
    /** Another opcode (atomics, memory windows, ...), or one of a failed completion, where it is undefined. */
    OTHER(-1);

    private final int value;

    WcOpcode(int value) {
        this.value = value;
    }

    /** Whether it completes a receive (the peer's send or RDMA write with immediate). */
    public boolean isReceive() {
        return this == RECV || this == RECV_RDMA_WITH_IMM;
    }

    static WcOpcode of(int value) {
        for (WcOpcode opcode : values()) {
            if (opcode.value == value) {
                return opcode;
            }
        }
        return OTHER;
    }
}
