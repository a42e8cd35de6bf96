package org.rdmaconnector.verbs;

import java.util.Map;
import java.util.Set;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.jna.Errno;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;

/**
 * Makes the {@link RdmaException} of a failed librdmacm or libibverbs call: names the errno and explains it for the
 * call, where strerror(3) would mislead (ENOMEM of a pinning call is the locked-memory limit, with the limit in force
 * now).
 */
public final class RdmaErrors {
    private static final String MEMLOCK_ADVICE = "raise the locked-memory limit (ulimit -l; LimitMEMLOCK= for a "
        + "systemd service; the container's memlock ulimit)";
    private static final String QUEUE_ENOMEM = "out of memory, which for RDMA is most often the locked-memory limit "
        + "(RLIMIT_MEMLOCK: the device pins queues and domains like registered memory); " + MEMLOCK_ADVICE;
    // The calls whose ENOMEM is most often RLIMIT_MEMLOCK: their message says the limit in force now.
    private static final Set<String> PINNING = Set.of("ibv_reg_mr", "ibv_alloc_pd", "ibv_create_cq", "ibv_create_qp",
        "rdma_create_qp");

    // What a given errno means for a given call, where strerror(3) would mislead; "*" for any call.
    private static final Map<String, String> EXPLANATIONS = Map.ofEntries(
        Map.entry("*/" + Layout.ENODEV, "no RDMA device is present on this machine"),
        Map.entry("*/" + Layout.ENOSYS, "the kernel has no RDMA support (no ib_uverbs; load the RDMA modules or add a "
            + "Soft-RoCE device with 'rdma link add')"),
        Map.entry("ibv_destroy_comp_channel/" + Layout.EBUSY, "completion queues are still attached to this channel;"
            + " close them first"),
        Map.entry("ibv_reg_mr/" + Layout.ENOMEM, "cannot pin the memory; " + MEMLOCK_ADVICE + " or register less"),
        Map.entry("ibv_alloc_pd/" + Layout.ENOMEM, QUEUE_ENOMEM),
        Map.entry("ibv_create_cq/" + Layout.ENOMEM, QUEUE_ENOMEM),
        Map.entry("ibv_create_qp/" + Layout.ENOMEM, QUEUE_ENOMEM),
        Map.entry("rdma_create_qp/" + Layout.ENOMEM, QUEUE_ENOMEM),
        Map.entry("rdma_create_qp/" + Layout.EINVAL, "the device refuses the queue pair's sizes (work requests beyond "
            + "its max_qp_wr, or more inline data than it can carry: MaxInlineData of the connection definition), or "
            + "the id's connection request is no longer pending (its peer gave up waiting, e.g. its connect timed out "
            + "while the request waited for a delivery thread)"),
        Map.entry("ibv_reg_mr/" + Layout.EFAULT, "the buffer is not valid memory of this process"),
        Map.entry("*/" + Layout.EADDRINUSE, "the address and port are already in use by another listener"),
        Map.entry("*/" + Layout.EADDRNOTAVAIL, "no RDMA device has that local address"),
        Map.entry("*/" + Layout.EPERM, "not permitted; check access to /dev/infiniband and the locked-memory limit"),
        Map.entry("*/" + Layout.EACCES, "not permitted; check access to /dev/infiniband"));

    private RdmaErrors() {
    }

    /** An error of {@code function} with {@code errno}, explained in the message. */
    public static RdmaException of(String function, int errno) {
        return of(function, errno, null);
    }

    /** As {@link #of(String, int)}, with a detail (the object or argument concerned) in the message. */
    public static RdmaException of(String function, int errno, String detail) {
        return new RdmaException(function, errno, Errno.name(errno),
            explanation(function, errno) + (detail == null ? "" : " [" + detail + "]"));
    }

    /** An error whose explanation is given, where the errno's usual one would mislead (a device name not found). */
    public static RdmaException explained(String function, int errno, String explanation) {
        return new RdmaException(function, errno, Errno.name(errno), explanation);
    }

    /** An error from the last native call on this thread: reads errno now, so call it right after the failing call. */
    static RdmaException lastError(String function, String detail) {
        return of(function, Mem.errno(), detail);
    }

    /**
     * The error of a verbs call that returns 0 on success, and on failure either the errno value or -1 with errno
     * set (both occur across rdma-core versions and providers, as the man pages allow).
     */
    static RdmaException fromReturnCode(String function, int rc, String detail) {
        return of(function, rc > 0 ? rc : Mem.errno(), detail);
    }

    private static String explanation(String function, int errno) {
        String explanation = EXPLANATIONS.get(function + "/" + errno);
        if (explanation == null) {
            explanation = EXPLANATIONS.get("*/" + errno);
        }
        if (explanation == null) {
            String text = errno > 0 ? Mem.strerror(errno) : null;
            explanation = text != null ? text : "unknown error";
        }
        if (errno == Layout.ENOMEM && PINNING.contains(function)) {
            explanation += "; " + Rdma.lockedMemoryReport();
        }
        return explanation;
    }
}
