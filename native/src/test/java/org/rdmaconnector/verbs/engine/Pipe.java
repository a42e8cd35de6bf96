package org.rdmaconnector.verbs.engine;

import com.sun.jna.Memory;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.RdmaErrors;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.LibC;
import org.rdmaconnector.verbs.jna.Mem;

/**
 * A real non-blocking pipe as an event source for the engine tests: the test writes ints (key, sequence) into the
 * write end; {@link #next()} reads one 8-byte record per event from the read end, like a channel's get-event.
 */
final class Pipe implements EventSource<long[]> {
    final int readFd;
    final int writeFd;
    final AtomicInteger opened = new AtomicInteger();
    final AtomicInteger closed = new AtomicInteger();
    volatile boolean keyed;
    // when set (with keyed), the key of an event is heldKeys[its key]: keys that hold their own delivery queue
    volatile OrderKey[] heldKeys;
    volatile RuntimeException failNext;
    volatile Error crashNext;
    // when set, next() counts down 'inNext' and waits for 'holdNext': a source stuck in its read, holding the loop
    volatile CountDownLatch holdNext;
    final CountDownLatch inNext = new CountDownLatch(1);
    private final Memory buffer = Mem.allocate(8);
    private final Memory writeBuffer = Mem.allocate(8);

    Pipe() {
        try (Memory fds = Mem.allocate(8)) {
            if (LibC.pipe2(Mem.address(fds), Layout.O_NONBLOCK | Layout.O_CLOEXEC) != 0) {
                throw RdmaErrors.of("pipe2", Mem.errno());
            }
            readFd = fds.getInt(0);
            writeFd = fds.getInt(4);
        }
    }

    /** Writes one record; false when the pipe is full. */
    synchronized boolean write(int key, int sequence) {
        writeBuffer.setInt(0, key);
        writeBuffer.setInt(4, sequence);
        return LibC.write(writeFd, Mem.address(writeBuffer), 8) == 8;
    }

    @Override
    public int fd() {
        return readFd;
    }

    @Override
    public void open() {
        opened.incrementAndGet();
    }

    @Override
    public long[] next() {
        RuntimeException failure = failNext;
        if (failure != null) {
            throw failure;
        }
        Error crash = crashNext;
        if (crash != null) {
            throw crash;
        }
        CountDownLatch hold = holdNext;
        if (hold != null) {
            inNext.countDown();
            awaitUninterruptibly(hold);
        }
        long n = LibC.read(readFd, Mem.address(buffer), 8);
        if (n < 0) {
            int errno = Mem.errno();
            if (errno == Layout.EAGAIN) {
                return null;
            }
            throw RdmaErrors.of("read", errno);
        }
        if (n != 8) {
            throw new IllegalStateException("short read of " + n + " bytes");
        }
        return new long[] {buffer.getInt(0), buffer.getInt(4)};
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public Object orderKey(long[] event) {
        OrderKey[] held = heldKeys;
        return !keyed ? this : held != null ? held[(int) event[0]] : (Object) event[0];
    }

    @Override
    public void close() {
        closed.incrementAndGet();
    }

    void closeFds() {
        LibC.close(readFd);
        LibC.close(writeFd);
        buffer.close();
        writeBuffer.close();
    }
}
