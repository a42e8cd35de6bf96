package org.rdmaconnector.verbs.device;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.FutureTask;
import java.util.function.BooleanSupplier;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.verbs.jna.Layout;

/**
 * Messages sent over an endpoint to a peer that echoes them, each echo checked as it comes back: its bytes, and its
 * place (the k-th receive must hold the k-th message, so a message lost, repeated or reordered fails the stream).
 * Sizes and contents come from a seed; up to {@link #WINDOW} messages are in flight.
 */
final class EchoStream {
    /** Messages in flight at once (each with its receive posted before its send). */
    static final int WINDOW = 8;

    private final RdmaEndpoint endpoint;
    private final long seed;
    private final int maxSize;
    private final Duration timeout;
    private final ArrayDeque<Pending> window = new ArrayDeque<>();
    private long sent;
    private volatile long echoed; // read by other threads while the stream runs
    private long bytes;
    private long start = -1;

    private record Pending(long index, byte[] message, WorkRequest send, WorkRequest echo) {
    }

    /** What a finished stream measured. */
    record Figures(long messages, long bytes, long nanos) {
        double messagesPerSecond() {
            return messages * 1e9 / Math.max(1, nanos);
        }

        @Override
        public String toString() {
            return String.format("%d messages, %d bytes in %.1f s: %.0f messages/s, %.2f MB/s", messages, bytes,
                nanos / 1e9, messagesPerSecond(), bytes * 1e3 / Math.max(1, nanos));
        }
    }

    /** A send or receive of the stream completed with an error: the connection failed. */
    static final class Broken extends RuntimeException {
        private static final long serialVersionUID = 1L;
        /** Why the connection failed: the first error among the stream's requests that is not a flush. */
        final transient WorkCompletion cause;

        Broken(String what, WorkCompletion completion, WorkCompletion cause) {
            super(what + " completed with " + completion.statusText() + "; the connection failed with "
                + cause.statusText() + " (status " + cause.status() + ")");
            this.cause = cause;
        }
    }

    /**
     * @param maxSize the largest message (at most {@link RdmaEndpoint#MAX_STAGED_MESSAGE} and the peer's buffer)
     * @param timeout how long one send or echo may take
     */
    EchoStream(RdmaEndpoint endpoint, long seed, int maxSize, Duration timeout) {
        this.endpoint = endpoint;
        this.seed = seed;
        this.maxSize = maxSize;
        this.timeout = timeout;
    }

    /** Message {@code index} of the stream with {@code seed}: 8 bytes of index, then seeded bytes, 8 to max. */
    static byte[] message(long seed, long index, int maxSize) {
        SplittableRandom random = new SplittableRandom(seed * 31 + index);
        byte[] m = new byte[8 + random.nextInt(maxSize - 7)];
        ByteBuffer.wrap(m).putLong(index);
        for (int i = 8; i < m.length; i++) {
            m[i] = (byte) random.nextInt(256);
        }
        return m;
    }

    /** Sends {@code count} messages and checks every echo. */
    Figures run(long count) throws InterruptedException {
        return runUntil(() -> sent >= count);
    }

    /**
     * Sends messages until {@code enough} holds (checked before each send), then waits for the last echoes.
     *
     * @return the figures of the stream so far (over every run of it)
     */
    Figures runUntil(BooleanSupplier enough) throws InterruptedException {
        if (start < 0) {
            start = System.nanoTime();
        }
        while (!enough.getAsBoolean()) {
            if (window.size() == WINDOW) {
                check(window.poll());
            }
            byte[] m = message(seed, sent, maxSize);
            WorkRequest echo = endpoint.receive();
            window.add(new Pending(sent, m, endpoint.send(m), echo));
            sent++;
        }
        while (!window.isEmpty()) {
            check(window.poll());
        }
        return new Figures(echoed, bytes, System.nanoTime() - start);
    }

    long echoed() {
        return echoed;
    }

    /**
     * Runs the stream until it fails, on a thread of its own named {@code thread}; the task's result is what ended
     * it ({@link Broken}, an {@link AssertionError} for an echo late or wrong, ...).
     */
    FutureTask<Throwable> runUntilItEnds(String thread) {
        FutureTask<Throwable> task = new FutureTask<>(() -> {
            try {
                runUntil(() -> false);
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        new Thread(task, thread).start();
        return task;
    }

    /** The failure, with its cause looked up among the requests still in flight (they complete, flushed). */
    private Broken broken(String what, WorkCompletion failed) throws InterruptedException {
        WorkCompletion cause = failed;
        for (Pending p : window) {
            for (WorkRequest r : List.of(p.send, p.echo)) {
                WorkCompletion wc = r.await(timeout);
                if (cause.status() == Layout.IBV_WC_WR_FLUSH_ERR && wc != null && !wc.isSuccess()) {
                    cause = wc;
                }
            }
        }
        window.clear();
        return new Broken(what, failed, cause);
    }

    private void check(Pending p) throws InterruptedException {
        WorkCompletion send = p.send.await(timeout);
        if (send == null) {
            throw new AssertionError("send " + p.index + " did not complete within " + timeout);
        }
        if (!send.isSuccess()) {
            throw broken("send " + p.index, send);
        }
        WorkCompletion echo = p.echo.await(timeout);
        if (echo == null) {
            throw new AssertionError("the echo of message " + p.index + " did not arrive within " + timeout);
        }
        if (!echo.isSuccess()) {
            throw broken("the receive for the echo of message " + p.index, echo);
        }
        byte[] got = p.echo.data();
        if (!Arrays.equals(p.message, got)) {
            long index = got.length >= 8 ? ByteBuffer.wrap(got).getLong() : -1;
            throw new AssertionError("receive " + p.index + " holds " + got.length + " bytes (index " + index
                + ") instead of the echo of message " + p.index + " (" + p.message.length + " bytes)");
        }
        echoed++;
        bytes += got.length;
    }
}
