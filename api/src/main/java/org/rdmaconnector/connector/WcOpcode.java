package org.rdmaconnector.connector;

/** The operation of a work completion ({@code enum ibv_wc_opcode}). */
public enum WcOpcode {
    SEND(0),
    RDMA_WRITE(1),
    RDMA_READ(2),
    RECV(128),
    RECV_RDMA_WITH_IMM(129),
    /** Another opcode (atomics, memory windows, ...), or one of a failed completion, where it is undefined. */
    OTHER(-1);

    private static final WcOpcode[] ALL = values();
    private final int value;

    WcOpcode(int value) {
        this.value = value;
    }

    /** The C enum value ({@code IBV_WC_} and the name); -1 for OTHER. */
    public int value() {
        return value;
    }

    /** Whether it completes a receive (the peer's send or RDMA write with immediate). */
    public boolean isReceive() {
        return this == RECV || this == RECV_RDMA_WITH_IMM;
    }

    /** The opcode of C value {@code value}; OTHER for one not listed. */
    public static WcOpcode of(int value) {
        for (WcOpcode opcode : ALL) { // values() would copy the array on every completion
            if (opcode.value == value) {
                return opcode;
            }
        }
        return OTHER;
    }
}
