package org.rdmaconnector.verbs.jna;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * librdmacm ({@code rdma/rdma_cma.h}), JNA direct mapping, in header order. Pointers are {@code long} addresses.
 * Functions return 0 on success, -1 with errno set on failure (pointer-returning ones NULL), as the man pages say.
 * {@code rdma_get_local_addr} and {@code rdma_get_peer_addr} are {@code static inline}: the caller reads
 * {@code rdma_cm_id.route.addr} at the offsets in {@link Layout}.
 */
public final class RdmaCma {
    /** The soname of the library, as packaged by rdma-core. */
    public static final String LIBRARY = "librdmacm.so.1";
    private static final Throwable UNAVAILABILITY_CAUSE;

    static {
        Throwable cause = IbVerbs.unavailabilityCause();
        if (cause == null) {
            try {
                Native.register(RdmaCma.class, NativeLibrary.getInstance(LIBRARY));
            } catch (LinkageError | RuntimeException e) {
                cause = e;
            }
        }
        UNAVAILABILITY_CAUSE = cause;
    }

    private RdmaCma() {
    }

    /** Why librdmacm could not be bound, or null when it was. */
    public static Throwable unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    public static native long rdma_create_event_channel();

    public static native void rdma_destroy_event_channel(long channel);

    // int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context, enum rdma_port_space ps)
    public static native int rdma_create_id(long channel, long idOut, long context, int ps);

    public static native int rdma_destroy_id(long id);

    public static native int rdma_bind_addr(long id, long addr);

    public static native int rdma_resolve_addr(long id, long srcAddr, long dstAddr, int timeoutMs);

    public static native int rdma_resolve_route(long id, int timeoutMs);

    public static native int rdma_create_qp(long id, long pd, long qpInitAttr);

    public static native void rdma_destroy_qp(long id);

    public static native int rdma_connect(long id, long connParam);

    public static native int rdma_listen(long id, int backlog);

    public static native int rdma_accept(long id, long connParam);

    public static native int rdma_reject(long id, long privateData, byte privateDataLen);

    public static native int rdma_disconnect(long id);

    public static native int rdma_get_cm_event(long channel, long eventOut);

    public static native int rdma_ack_cm_event(long event);

    // returns __be16
    public static native short rdma_get_src_port(long id);

    public static native short rdma_get_dst_port(long id);

    public static native long rdma_get_devices(long numDevices);

    public static native void rdma_free_devices(long list);

    public static native long rdma_event_str(int event);

    public static native int rdma_migrate_id(long id, long channel);

    // int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
    public static native int rdma_set_option(long id, int level, int optname, long optval, long optlen);
}
