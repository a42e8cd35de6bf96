package org.rdmaconnector.verbs;

import org.rdmaconnector.verbs.jna.IbVerbs;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;

/**
 * A work completion ({@code struct ibv_wc}, ibv_poll_cq(3)), copied out of the completion queue.
 *
 * @param wrId the id of the work request it completes
 * @param status {@code enum ibv_wc_status}; 0 is success
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
        return status == Layout.IBV_WC_SUCCESS;
    }

    /** ibv_wc_status_str(3) of the status, e.g. "success", "Work Request Flushed Error". */
    public String statusText() {
        return statusText(status);
    }

    /** ibv_wc_status_str(3). */
    public static String statusText(int status) {
        return Mem.string(IbVerbs.ibv_wc_status_str(status));
    }

    static WorkCompletion read(long wc) {
        return new WorkCompletion(Mem.getLong(wc + Layout.IBV_WC_WR_ID), Mem.getInt(wc + Layout.IBV_WC_STATUS),
            WcOpcode.of(Mem.getInt(wc + Layout.IBV_WC_OPCODE)), Mem.getInt(wc + Layout.IBV_WC_VENDOR_ERR),
            Mem.getInt(wc + Layout.IBV_WC_BYTE_LEN), Integer.reverseBytes(Mem.getInt(wc + Layout.IBV_WC_IMM_DATA)),
            Mem.getInt(wc + Layout.IBV_WC_QP_NUM), Mem.getInt(wc + Layout.IBV_WC_SRC_QP),
            Mem.getInt(wc + Layout.IBV_WC_WC_FLAGS));
    }
}
