package org.rdmaconnector.verbs;

import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WorkCompletion;

/**
 * One polled {@code struct ibv_wc}, read out of a {@link WorkCompletions} batch into an object that is reused for
 * the next entry: what a completion's reader sees, valid until it returns, so that reading a completion queue makes
 * no object per completion. {@link #toWorkCompletion()} copies it when a copy must be kept. Not thread-safe.
 */
public final class PolledCompletion {
    private long wrId;
    private int status;
    private WcOpcode opcode;
    private int vendorError;
    private int byteLength;
    private int immediateData;
    private int qpNumber;
    private int sourceQp;
    private int flags;

    /** An empty one, for {@link WorkCompletions#read} to fill. */
    public PolledCompletion() {
    }

    /** One that holds {@code completion}'s fields (the connector's own completions, and tests). */
    public static PolledCompletion of(WorkCompletion completion) {
        PolledCompletion polled = new PolledCompletion();
        polled.set(completion.wrId(), completion.status(), completion.opcode(), completion.vendorError(),
            completion.byteLength(), completion.immediateData(), completion.qpNumber(), completion.sourceQp(),
            completion.flags());
        return polled;
    }

    void set(long wrId, int status, WcOpcode opcode, int vendorError, int byteLength, int immediateData,
             int qpNumber, int sourceQp, int flags) {
        this.wrId = wrId;
        this.status = status;
        this.opcode = opcode;
        this.vendorError = vendorError;
        this.byteLength = byteLength;
        this.immediateData = immediateData;
        this.qpNumber = qpNumber;
        this.sourceQp = sourceQp;
        this.flags = flags;
    }

    /** {@link WorkCompletion#wrId()}. */
    public long wrId() {
        return wrId;
    }

    /** {@link WorkCompletion#status()}. */
    public int status() {
        return status;
    }

    /** {@link WorkCompletion#opcode()}. */
    public WcOpcode opcode() {
        return opcode;
    }

    /** {@link WorkCompletion#vendorError()}. */
    public int vendorError() {
        return vendorError;
    }

    /** {@link WorkCompletion#byteLength()}. */
    public int byteLength() {
        return byteLength;
    }

    /** {@link WorkCompletion#immediateData()}. */
    public int immediateData() {
        return immediateData;
    }

    /** {@link WorkCompletion#qpNumber()}. */
    public int qpNumber() {
        return qpNumber;
    }

    /** {@link WorkCompletion#sourceQp()}. */
    public int sourceQp() {
        return sourceQp;
    }

    /** {@link WorkCompletion#flags()}. */
    public int flags() {
        return flags;
    }

    /** {@link WorkCompletion#isSuccess()}. */
    public boolean isSuccess() {
        return status == 0;
    }

    /** A copy, to keep. */
    public WorkCompletion toWorkCompletion() {
        return new WorkCompletion(wrId, status, opcode, vendorError, byteLength, immediateData, qpNumber, sourceQp,
            flags);
    }

    @Override
    public String toString() {
        return "polled " + toWorkCompletion();
    }
}
