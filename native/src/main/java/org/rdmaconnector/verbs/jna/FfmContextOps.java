package org.rdmaconnector.verbs.jna;

/**
 * The inline verbs through the JDK's FFM downcall handles ({@link FfmDowncalls}, Java 22 and later): no argument is
 * boxed, nothing is allocated per call (the functions are wrapped once, here).
 */
final class FfmContextOps implements ContextOps {
    private final Object pollCq;
    private final Object reqNotifyCq;
    private final Object postSend;
    private final Object postRecv;

    FfmContextOps(OpsTable table) {
        if (FfmDowncalls.unavailabilityCause() != null) {
            throw new IllegalStateException("FFM downcall handles are unavailable: "
                + FfmDowncalls.unavailabilityCause(), FfmDowncalls.unavailabilityCause());
        }
        pollCq = FfmDowncalls.function(table.pollCq());
        reqNotifyCq = FfmDowncalls.function(table.reqNotifyCq());
        postSend = FfmDowncalls.function(table.postSend());
        postRecv = FfmDowncalls.function(table.postRecv());
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
        try {
            return (int) FfmDowncalls.REQ_NOTIFY_CQ.invokeExact(reqNotifyCq, cq, solicitedOnly); // the errno itself
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

    private static int post(Object function, long qp, long wr, long badWr) {
        try {
            return (int) FfmDowncalls.POST.invokeExact(function, qp, wr, badWr); // the errno itself
        } catch (Throwable t) {
            throw FfmDowncalls.unexpected(t);
        }
    }

    @Override
    public OpsPath path() {
        return OpsPath.FFM;
    }
}
