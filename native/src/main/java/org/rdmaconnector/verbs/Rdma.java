package org.rdmaconnector.verbs;

import com.sun.jna.Memory;
import java.util.ArrayList;
import java.util.List;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.jna.Errno;
import org.rdmaconnector.verbs.jna.IbVerbs;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.LibC;
import org.rdmaconnector.verbs.jna.Mem;
import org.rdmaconnector.verbs.jna.RdmaCma;

/**
 * Entry point: whether rdma-core could be loaded (probed once, cause kept), the RDMA devices of this machine
 * ({@code ibv_get_device_list(3)}), and the locked-memory limit that registrations and queues are pinned against.
 */
public final class Rdma {
    private Rdma() {
    }

    /**
     * The soft locked-memory limit of this process ({@code getrlimit(RLIMIT_MEMLOCK)}, what {@code ulimit -l} shows in
     * KiB): the bytes that memory registrations, queues and protection domains may pin together.
     *
     * @return the limit in bytes, or -1 when it is unlimited
     * @throws IllegalStateException when libc cannot be bound or getrlimit fails, naming the call and errno
     */
    public static long lockedMemoryLimit() {
        Throwable cause = LibC.unavailabilityCause();
        if (cause != null) {
            throw new IllegalStateException("getrlimit(RLIMIT_MEMLOCK) is not callable: libc is not usable: "
                + cause.getMessage(), cause);
        }
        try (Memory limit = Mem.allocate(Layout.SIZEOF_RLIMIT)) {
            if (LibC.getrlimit(Layout.RLIMIT_MEMLOCK, Mem.address(limit)) != 0) {
                int errno = Mem.errno();
                throw new IllegalStateException("getrlimit(RLIMIT_MEMLOCK) failed: " + Errno.name(errno) + " ("
                    + errno + ")");
            }
            long soft = limit.getLong(Layout.RLIMIT_RLIM_CUR);
            return soft == Layout.RLIM_INFINITY ? -1 : soft;
        }
    }

    /**
     * One sentence on {@link #lockedMemoryLimit()} for logs and error messages, e.g. "the locked-memory limit
     * (RLIMIT_MEMLOCK) is 8388608 bytes (ulimit -l 8192)"; never throws (says why the limit is unknown instead).
     */
    public static String lockedMemoryReport() {
        long limit;
        try {
            limit = lockedMemoryLimit();
        } catch (RuntimeException | LinkageError e) {
            return "the locked-memory limit (RLIMIT_MEMLOCK) could not be read: " + e.getMessage();
        }
        return "the locked-memory limit (RLIMIT_MEMLOCK) is " + (limit < 0 ? "unlimited"
            : limit + " bytes (ulimit -l " + limit / 1024 + ")");
    }

    /** Whether libibverbs and librdmacm were found and bound. Says nothing about devices. */
    public static boolean isAvailable() {
        return unavailabilityCause() == null;
    }

    /** Why rdma-core could not be loaded, or null when it was. */
    public static Throwable unavailabilityCause() {
        return RdmaCma.unavailabilityCause();
    }

    /** Throws {@link UnsatisfiedLinkError} naming the missing library when rdma-core could not be loaded. */
    public static void ensureAvailable() {
        Throwable cause = unavailabilityCause();
        if (cause != null) {
            UnsatisfiedLinkError error = new UnsatisfiedLinkError("rdma-core is not usable: " + cause.getMessage()
                + " (install the Debian packages libibverbs1 librdmacm1 ibverbs-providers)");
            error.initCause(cause);
            throw error;
        }
    }

    /**
     * The RDMA devices, in the order libibverbs lists them.
     *
     * @throws RdmaException when the kernel has no RDMA support ({@code ENOSYS}) or the list cannot be read
     */
    public static List<Device> devices() {
        ensureAvailable();
        try (Memory count = Mem.allocate(4)) {
            long list = IbVerbs.ibv_get_device_list(Mem.address(count));
            if (list == 0) {
                throw RdmaErrors.lastError("ibv_get_device_list", null);
            }
            try {
                int n = count.getInt(0);
                List<Device> devices = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    devices.add(Device.of(Mem.getLong(list + 8L * i)));
                }
                return List.copyOf(devices);
            } finally {
                IbVerbs.ibv_free_device_list(list);
            }
        }
    }

    /**
     * The device called {@code name}.
     *
     * @throws IllegalArgumentException if {@code name} is null or empty
     * @throws RdmaException {@code ENODEV} naming the devices present when there is no such device
     */
    public static Device device(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("device name must not be null or empty");
        }
        List<Device> devices = devices();
        for (Device device : devices) {
            if (device.name().equals(name)) {
                return device;
            }
        }
        throw RdmaErrors.explained("ibv_get_device_list", org.rdmaconnector.verbs.jna.Layout.ENODEV,
            "no device named '" + name + "'; present: " + devices.stream().map(Device::name).toList());
    }
}
