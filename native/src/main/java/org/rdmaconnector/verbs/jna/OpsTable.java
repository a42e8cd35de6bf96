package org.rdmaconnector.verbs.jna;

/**
 * The provider's functions behind the inline verbs, read once from {@code ibv_context->ops} (offsets from the headers,
 * {@link Layout}): the addresses {@link ContextOps} calls.
 */
public record OpsTable(long pollCq, long reqNotifyCq, long postSend, long postRecv) {
    /** @throws IllegalArgumentException naming the first function that is NULL */
    public OpsTable {
        requireFunction(pollCq, "poll_cq");
        requireFunction(reqNotifyCq, "req_notify_cq");
        requireFunction(postSend, "post_send");
        requireFunction(postRecv, "post_recv");
    }

    /**
     * The table of {@code context}, a live {@code struct ibv_context *}.
     *
     * @throws IllegalArgumentException when {@code context} is NULL or its provider lacks one of the functions
     */
    public static OpsTable of(long context) {
        if (context == 0) {
            throw new IllegalArgumentException("context is NULL");
        }
        return new OpsTable(Mem.getLong(context + Layout.OPS_POLL_CQ), Mem.getLong(context + Layout.OPS_REQ_NOTIFY_CQ),
            Mem.getLong(context + Layout.OPS_POST_SEND), Mem.getLong(context + Layout.OPS_POST_RECV));
    }

    private static void requireFunction(long address, String name) {
        if (address == 0) {
            throw new IllegalArgumentException("ops." + name + " is NULL: the device's provider does not implement "
                + name);
        }
    }
}
