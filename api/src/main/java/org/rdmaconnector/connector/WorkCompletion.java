package org.rdmaconnector.connector;


/**
 * A work completion ({@code struct ibv_wc}, ibv_poll_cq(3)), copied out of the completion queue.
 *
 * @param wrId the id of the work request it completes
 * @param status {@code enum ibv_wc_status} ({@link WcStatus}); 0 is success
 * @param opcode the operation
 * @param vendorError vendor_err
 * @param byteLength bytes received (receives only; for {@link WcOpcode#RECV_RDMA_WITH_IMM} the length of the
 *     peer's RDMA WRITE, whose bytes are in the written region, not in the receive's buffer)
 * @param immediateData imm_data in host order (when flags say so)
 * @param qpNumber the local queue pair
 * @param sourceQp the remote queue pair (UD)
 * @param flags wc_flags
 */
public record WorkCompletion(long wrId, int status, WcOpcode opcode, int vendorError, int byteLength,
                             int immediateData, int qpNumber, int sourceQp, int flags) {
    /** The wc_flags bit saying that {@link #immediateData()} holds immediate data ({@code IBV_WC_WITH_IMM}). */
    public static final int WITH_IMM = 2;

    /** Whether it carries immediate data (a SEND or RDMA WRITE with immediate received): flag {@link #WITH_IMM}. */
    public boolean hasImmediate() {
        return (flags & WITH_IMM) != 0;
    }

    /** Whether the work request succeeded ({@code IBV_WC_SUCCESS}). */
    public boolean isSuccess() {
        return status == WcStatus.SUCCESS.value();
    }

    /** ibv_wc_status_str(3) of the status, e.g. "success", "Work Request Flushed Error". */
    public String statusText() {
        return statusText(status);
    }

    /** ibv_wc_status_str(3) of {@code status}. */
    public static String statusText(int status) {
        return WcStatus.text(status);
    }
}
