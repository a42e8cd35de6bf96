package org.rdmaconnector.verbs.jna;

import com.sun.jna.Function;

/**
 * The inline verbs through JNA's {@link Function}, the only way JNA calls a C function pointer: every call boxes its
 * arguments into an {@code Object[]} (about 72 bytes and four times a direct-mapped call's time: BENCHMARKS.md).
 * Pointers go as {@code Long}, which every supported 64-bit ABI passes like a pointer. Works on any Java.
 */
final class JnaContextOps implements ContextOps {
    private final Function pollCq;
    private final Function reqNotifyCq;
    private final Function postSend;
    private final Function postRecv;

    JnaContextOps(OpsTable table) {
        pollCq = Function.getFunction(Mem.pointer(table.pollCq()));
        reqNotifyCq = Function.getFunction(Mem.pointer(table.reqNotifyCq()));
        postSend = Function.getFunction(Mem.pointer(table.postSend()));
        postRecv = Function.getFunction(Mem.pointer(table.postRecv()));
    }

    @Override
    public int ibv_poll_cq(long cq, int numEntries, long wc) {
        return pollCq.invokeInt(new Object[] {cq, numEntries, wc});
    }

    @Override
    public int ibv_req_notify_cq(long cq, int solicitedOnly) {
        return reqNotifyCq.invokeInt(new Object[] {cq, solicitedOnly});
    }

    @Override
    public int ibv_post_send(long qp, long wr, long badWr) {
        return postSend.invokeInt(new Object[] {qp, wr, badWr});
    }

    @Override
    public int ibv_post_recv(long qp, long wr, long badWr) {
        return postRecv.invokeInt(new Object[] {qp, wr, badWr});
    }

    @Override
    public OpsPath path() {
        return OpsPath.JNA;
    }
}
