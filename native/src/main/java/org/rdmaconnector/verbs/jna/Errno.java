package org.rdmaconnector.verbs.jna;

import java.util.HashMap;
import java.util.Map;

/** Symbolic names of the errno values the libraries report ({@code ENODEV}, {@code EBUSY}, ...). */
public final class Errno {
    private static final Map<Integer, String> NAMES = new HashMap<>();

    static {
        put(Layout.EPERM, "EPERM");
        put(Layout.ENOENT, "ENOENT");
        put(Layout.EINTR, "EINTR");
        put(Layout.EIO, "EIO");
        put(Layout.EBADF, "EBADF");
        put(Layout.EAGAIN, "EAGAIN");
        put(Layout.ENOMEM, "ENOMEM");
        put(Layout.EACCES, "EACCES");
        put(Layout.EFAULT, "EFAULT");
        put(Layout.EBUSY, "EBUSY");
        put(Layout.EEXIST, "EEXIST");
        put(Layout.ENODEV, "ENODEV");
        put(Layout.EINVAL, "EINVAL");
        put(Layout.EMFILE, "EMFILE");
        put(Layout.ENOSPC, "ENOSPC");
        put(Layout.ENOSYS, "ENOSYS");
        put(Layout.EPROTONOSUPPORT, "EPROTONOSUPPORT");
        put(Layout.EOPNOTSUPP, "EOPNOTSUPP");
        put(Layout.EADDRINUSE, "EADDRINUSE");
        put(Layout.EADDRNOTAVAIL, "EADDRNOTAVAIL");
        put(Layout.ENETUNREACH, "ENETUNREACH");
        put(Layout.ECONNRESET, "ECONNRESET");
        put(Layout.ENOBUFS, "ENOBUFS");
        put(Layout.EISCONN, "EISCONN");
        put(Layout.ENOTCONN, "ENOTCONN");
        put(Layout.ETIMEDOUT, "ETIMEDOUT");
        put(Layout.ECONNREFUSED, "ECONNREFUSED");
        put(Layout.EHOSTUNREACH, "EHOSTUNREACH");
        put(Layout.EALREADY, "EALREADY");
        put(Layout.EINPROGRESS, "EINPROGRESS");
    }

    private Errno() {
    }

    private static void put(int errno, String name) {
        NAMES.put(errno, name);
    }

    /** The symbolic name of {@code errno}, or {@code "errno <n>"} for one not listed. */
    public static String name(int errno) {
        String name = NAMES.get(errno);
        return name != null ? name : "errno " + errno;
    }
}
