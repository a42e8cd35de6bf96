package org.rdmaconnector.connector;

/**
 * The status of a work completion ({@code enum ibv_wc_status}, in header order), with the text
 * ibv_wc_status_str(3) gives it.
 */
public enum WcStatus {
    SUCCESS("success"),
    LOC_LEN_ERR("local length error"),
    LOC_QP_OP_ERR("local QP operation error"),
    LOC_EEC_OP_ERR("local EE context operation error"),
    LOC_PROT_ERR("local protection error"),
    WR_FLUSH_ERR("Work Request Flushed Error"),
    MW_BIND_ERR("memory management operation error"),
    BAD_RESP_ERR("bad response error"),
    LOC_ACCESS_ERR("local access error"),
    REM_INV_REQ_ERR("remote invalid request error"),
    REM_ACCESS_ERR("remote access error"),
    REM_OP_ERR("remote operation error"),
    RETRY_EXC_ERR("transport retry counter exceeded"),
    RNR_RETRY_EXC_ERR("RNR retry counter exceeded"),
    LOC_RDD_VIOL_ERR("local RDD violation error"),
    REM_INV_RD_REQ_ERR("remote invalid RD request"),
    REM_ABORT_ERR("aborted error"),
    INV_EECN_ERR("invalid EE context number"),
    INV_EEC_STATE_ERR("invalid EE context state"),
    FATAL_ERR("fatal error"),
    RESP_TIMEOUT_ERR("response timeout error"),
    GENERAL_ERR("general error"),
    TM_ERR("TM error"),
    TM_RNDV_INCOMPLETE("TM software rendezvous");

    private static final WcStatus[] VALUES = values();

    private final String text;

    WcStatus(String text) {
        this.text = text;
    }

    /** The C enum value ({@code IBV_WC_} and the name). */
    public int value() {
        return ordinal();
    }

    /** What ibv_wc_status_str(3) says of it, e.g. "transport retry counter exceeded". */
    public String text() {
        return text;
    }

    /** The status of C value {@code value}; null for one this version does not know. */
    public static WcStatus of(int value) {
        return value >= 0 && value < VALUES.length ? VALUES[value] : null;
    }

    /** ibv_wc_status_str(3) of any value: "unknown" for one this version does not know, as the C function says. */
    public static String text(int value) {
        WcStatus status = of(value);
        return status == null ? "unknown" : status.text;
    }
}
