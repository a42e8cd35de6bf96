package org.rdmaconnector.verbs.jna;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * libibverbs ({@code infiniband/verbs.h}), JNA direct mapping, in header order. Pointers are {@code long} addresses.
 * Functions that return a pointer return 0 (NULL) on failure and set errno; those that return int return 0 on
 * success and -1 (errno set) or a positive errno, as their man pages say. {@code ibv_poll_cq},
 * {@code ibv_req_notify_cq}, {@code ibv_post_send} and {@code ibv_post_recv} are {@code static inline} in verbs.h:
 * they are called through the function pointers in {@code ibv_context->ops} ({@link ContextOps}, on the
 * {@link OpsPath} chosen for the JVM).
 */
public final class IbVerbs {
    /** The soname of the library, as packaged by rdma-core. */
    public static final String LIBRARY = "libibverbs.so.1";
    private static final Throwable UNAVAILABILITY_CAUSE;

    static {
        Throwable cause = LibC.unavailabilityCause();
        if (cause == null) {
            try {
                Native.register(IbVerbs.class, NativeLibrary.getInstance(LIBRARY));
            } catch (LinkageError | RuntimeException e) {
                cause = e;
            }
        }
        UNAVAILABILITY_CAUSE = cause;
    }

    private IbVerbs() {
    }

    /** Why libibverbs could not be bound, or null when it was. */
    public static Throwable unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    // struct ibv_device **ibv_get_device_list(int *num_devices)
    public static native long ibv_get_device_list(long numDevices);

    public static native void ibv_free_device_list(long list);

    public static native long ibv_get_device_name(long device);

    // -1 on kernels that cannot tell it over netlink
    public static native int ibv_get_device_index(long device);

    public static native long ibv_get_device_guid(long device);

    public static native long ibv_open_device(long device);

    public static native int ibv_close_device(long context);

    public static native int ibv_get_async_event(long context, long event);

    public static native void ibv_ack_async_event(long event);

    public static native int ibv_query_device(long context, long deviceAttr);

    // the exported symbol fills the compat prefix of struct ibv_port_attr; the caller zeroes the rest
    public static native int ibv_query_port(long context, byte portNum, long portAttr);

    // ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries, size_t max_entries,
    //     uint32_t flags, size_t entry_size): the valid GIDs of every port; the count, or a negative errno
    public static native long _ibv_query_gid_table(long context, long entries, long maxEntries, int flags,
        long entrySize);

    public static native long ibv_alloc_pd(long context);

    public static native int ibv_dealloc_pd(long pd);

    public static native long ibv_reg_mr(long pd, long addr, long length, int access);

    public static native int ibv_dereg_mr(long mr);

    // int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask): 0 or an errno value
    public static native int ibv_modify_qp(long qp, long attr, int attrMask);

    // int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
    //     struct ibv_qp_init_attr *init_attr): 0 or an errno value
    public static native int ibv_query_qp(long qp, long attr, int attrMask, long initAttr);

    public static native long ibv_create_comp_channel(long context);

    public static native int ibv_destroy_comp_channel(long channel);

    public static native long ibv_create_cq(long context, int cqe, long cqContext, long channel, int compVector);

    public static native int ibv_destroy_cq(long cq);

    public static native int ibv_get_cq_event(long channel, long cqOut, long cqContextOut);

    public static native void ibv_ack_cq_events(long cq, int nevents);

    public static native long ibv_wc_status_str(int status);

    public static native long ibv_event_type_str(int eventType);
}
