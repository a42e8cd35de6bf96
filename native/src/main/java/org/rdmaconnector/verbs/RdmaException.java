package org.rdmaconnector.verbs;

import java.util.Map;
import java.util.Set;
import org.rdmaconnector.verbs.jna.Errno;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;

/**
 * A call into librdmacm or libibverbs failed. Carries the C function, the errno and its symbolic name, and a sentence
 * a person can act on: {@code rdma_create_event_channel failed: ENODEV (19): no RDMA device is present on this machine}.
 * Bad arguments are not RDMA errors: they throw {@link IllegalArgumentException}.
 */
public class RdmaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

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

    private final String function;
    private final int errno;

    /** An error of {@code function} with {@code errno}, explained in the message. */
    public RdmaException(String function, int errno) {
        this(function, errno, null);
    }

    /** As {@link #RdmaException(String, int)}, with a detail (the object or argument concerned) in the message. */
    public RdmaException(String function, int errno, String detail) {
        super(message(function, errno, detail));
        this.function = function;
        this.errno = errno;
    }

    private RdmaException(String function, int errno, String explanation, boolean explained) {
        super(function + " failed: " + Errno.name(errno) + " (" + errno + "): " + explanation);
        this.function = function;
        this.errno = errno;
    }

    /** An error whose explanation is given, where the errno's usual one would mislead (a device name not found). */
    public static RdmaException explained(String function, int errno, String explanation) {
        return new RdmaException(function, errno, explanation, true);
    }

    /** An error from the last native call on this thread: reads errno now, so call it right after the failing call. */
    static RdmaException lastError(String function, String detail) {
        return new RdmaException(function, Mem.errno(), detail);
    }

    /**
     * The error of a verbs call that returns 0 on success, and on failure either the errno value or -1 with errno
     * set (both occur across rdma-core versions and providers, as the man pages allow).
     */
    static RdmaException fromReturnCode(String function, int rc, String detail) {
        return new RdmaException(function, rc > 0 ? rc : Mem.errno(), detail);
    }

    private static String message(String function, int errno, String detail) {
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
        return function + " failed: " + Errno.name(errno) + " (" + errno + "): " + explanation
            + (detail == null ? "" : " [" + detail + "]");
    }

    /** The C function that failed, e.g. {@code rdma_create_event_channel}. */
    public String function() {
        return function;
    }

    /** The errno it reported. */
    public int errno() {
        return errno;
    }

    /** The symbolic name of {@link #errno()}, e.g. {@code ENODEV}. */
    public String errnoName() {
        return Errno.name(errno);
    }
}
