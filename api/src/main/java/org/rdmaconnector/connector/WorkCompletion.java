package org.rdmaconnector.connector;


/**
 * A work completion ({@code struct ibv_wc}, ibv_poll_cq(3)), copied out of the completion queue.
 *
 * @param wrId the id of the work request it completes
 * @param status {@code enum ibv_wc_status} ({@link WcStatus}); 0 is success
 * @param opcode the operation
 * @param vendorError vendor_err
 * @param byteLength bytes received (receives only)
 * @param immediateData imm_data in host order (when flags say so)
 * @param qpNumber the local queue pair
 * @param sourceQp the remote queue pair (UD)
 * @param flags wc_flags
 */
public record WorkCompletion(long wrId, int status, WcOpcode opcode, int vendorError, int byteLength,
                             int immediateData, int qpNumber, int sourceQp, int flags) {
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
