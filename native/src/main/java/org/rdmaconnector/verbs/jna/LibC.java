package org.rdmaconnector.verbs.jna;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * The libc calls the bindings need: file descriptor flags, epoll, eventfd, poll, read, write, close, and getrlimit
 * (the locked-memory limit that RDMA pins memory against).
 * JNA direct mapping; C names and argument order. Pointers are passed as {@code long} addresses (x86_64).
 * Calls return what C returns; on -1 the caller reads {@link Native#getLastError()}.
 */
public final class LibC {
    private static final Throwable UNAVAILABILITY_CAUSE;

    static {
        JnaSetup.prepare();
        Throwable cause = null;
        try {
            Native.register(LibC.class, NativeLibrary.getInstance("c"));
        } catch (LinkageError | RuntimeException e) {
            cause = e;
        }
        UNAVAILABILITY_CAUSE = cause;
    }

    private LibC() {
    }

    /** Why libc could not be bound, or null when it was. */
    public static Throwable unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    public static native int fcntl(int fd, int cmd, int arg);

    public static native int close(int fd);

    public static native long read(int fd, long buf, long count);

    public static native long write(int fd, long buf, long count);

    public static native int poll(long fds, long nfds, int timeoutMillis);

    public static native int eventfd(int initval, int flags);

    public static native int epoll_create1(int flags);

    public static native int epoll_ctl(int epfd, int op, int fd, long event);

    public static native int epoll_wait(int epfd, long events, int maxevents, int timeoutMillis);

    public static native int pipe2(long pipefd, int flags);

    public static native long strerror(int errnum);

    public static native int getrlimit(int resource, long rlim);
}
