package org.rdmaconnector.verbs.jna;

/**
 * The inline verbs through the JDK's FFM downcall handles ({@link FfmDowncalls}, Java 22 and later): no argument is
 * boxed, nothing is allocated per call.
 */
final class FfmContextOps implements ContextOps {
    private final long pollCq;
    private final long reqNotifyCq;
    private final long postSend;
    private final long postRecv;

    FfmContextOps(OpsTable table) {
        if (FfmDowncalls.unavailabilityCause() != null) {
            throw new IllegalStateException("FFM downcall handles are unavailable: "
                + FfmDowncalls.unavailabilityCause(), FfmDowncalls.unavailabilityCause());
        }
        pollCq = table.pollCq();
        reqNotifyCq = table.reqNotifyCq();
        postSend = table.postSend();
        postRecv = table.postRecv();
    }

    @Override
    public int ibv_poll_cq(long cq, int numEntries, long wc) {
        Object state = FfmDowncalls.callState();
        try {
            return FfmDowncalls.keepErrno((int) FfmDowncalls.POLL_CQ.invokeExact(pollCq, state, cq, numEntries, wc),
                state);
        } catch (Throwable t) {
            throw FfmDowncalls.unexpected(t);
        }
    }

    @Override
    public int ibv_req_notify_cq(long cq, int solicitedOnly) {
        Object state = FfmDowncalls.callState();
        try {
            return FfmDowncalls.keepErrno((int) FfmDowncalls.REQ_NOTIFY_CQ.invokeExact(reqNotifyCq, state, cq,
                solicitedOnly), state);
        } catch (Throwable t) {
            throw FfmDowncalls.unexpected(t);
        }
    }

    @Override
    public int ibv_post_send(long qp, long wr, long badWr) {
        return post(postSend, qp, wr, badWr);
    }

    @Override
    public int ibv_post_recv(long qp, long wr, long badWr) {
        return post(postRecv, qp, wr, badWr);
    }

    private static int post(long function, long qp, long wr, long badWr) {
        Object state = FfmDowncalls.callState();
        try {
            return FfmDowncalls.keepErrno((int) FfmDowncalls.POST.invokeExact(function, state, qp, wr, badWr), state);
        } catch (Throwable t) {
            throw FfmDowncalls.unexpected(t);
        }
    }

    @Override
    public OpsPath path() {
        return OpsPath.FFM;
    }
}
