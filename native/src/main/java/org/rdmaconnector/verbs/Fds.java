package org.rdmaconnector.verbs;

import com.sun.jna.Memory;
import java.time.Duration;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.LibC;
import org.rdmaconnector.verbs.jna.Mem;

/** The file descriptor behaviour shared by event channels, completion channels and device async fds. */
final class Fds {
    private Fds() {
    }

    static void setNonBlocking(int fd, boolean nonBlocking, String what) {
        int flags = LibC.fcntl(fd, Layout.F_GETFL, 0);
        if (flags < 0) {
            throw RdmaErrors.lastError("fcntl", what);
        }
        int wanted = nonBlocking ? flags | Layout.O_NONBLOCK : flags & ~Layout.O_NONBLOCK;
        if (wanted != flags && LibC.fcntl(fd, Layout.F_SETFL, wanted) < 0) {
            throw RdmaErrors.lastError("fcntl", what);
        }
    }

    static boolean isNonBlocking(int fd, String what) {
        int flags = LibC.fcntl(fd, Layout.F_GETFL, 0);
        if (flags < 0) {
            throw RdmaErrors.lastError("fcntl", what);
        }
        return (flags & Layout.O_NONBLOCK) != 0;
    }

    /** Waits with poll(2) until {@code fd} is readable or the timeout passes; true when readable. */
    static boolean awaitReadable(int fd, Duration timeout, String what) {
        int millis = timeoutMillis(timeout, "timeout");
        try (Memory pollfd = Mem.allocate(Layout.SIZEOF_POLLFD)) {
            pollfd.setInt(Layout.POLLFD_FD, fd);
            pollfd.setShort(Layout.POLLFD_EVENTS, (short) Layout.POLLIN);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                int n = LibC.poll(Mem.address(pollfd), 1, millis);
                if (n >= 0) {
                    return n > 0;
                }
                int errno = Mem.errno();
                if (errno != Layout.EINTR) {
                    throw RdmaErrors.of("poll", errno, what);
                }
                millis = (int) Math.max(0, (deadline - System.nanoTime()) / 1_000_000);
            }
        }
    }

    /** A timeout as poll(2)/rdma_resolve_* milliseconds; rejects null, negative and over Integer.MAX_VALUE ms. */
    static int timeoutMillis(Duration timeout, String name) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException(name + " must be a non-negative duration, was " + timeout);
        }
        if (timeout.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException(name + " must be at most " + Integer.MAX_VALUE + " ms, was " + timeout);
        }
        return (int) timeout.toMillis();
    }
}
