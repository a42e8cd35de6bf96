package org.rdmaconnector.verbs;

import java.time.Duration;

/**
 * What event channels and completion channels share: a file descriptor that can be made non-blocking and polled.
 * Its accessors are guarded like every native call.
 */
abstract class FdChannel extends NativeResource {
    private final int fd;
    private final String description;

    FdChannel(int fd, String kind) {
        this.fd = fd;
        this.description = kind + " fd " + fd;
    }

    /** The file descriptor, for poll/epoll. */
    public final int fd() {
        acquire();
        try {
            return fd;
        } finally {
            release();
        }
    }

    /** Makes the get-event call return null instead of blocking when no event is pending. */
    public final void setNonBlocking(boolean nonBlocking) {
        acquire();
        try {
            Fds.setNonBlocking(fd, nonBlocking, description);
        } finally {
            release();
        }
    }

    /** Whether the fd is in non-blocking mode. */
    public final boolean isNonBlocking() {
        acquire();
        try {
            return Fds.isNonBlocking(fd, description);
        } finally {
            release();
        }
    }

    /** Waits until an event is pending or the timeout passes; true when one is. */
    public final boolean awaitEvent(Duration timeout) {
        acquire();
        try {
            return Fds.awaitReadable(fd, timeout, description);
        } finally {
            release();
        }
    }

    /** "event channel fd 7", for messages. */
    final String description() {
        return description;
    }
}
