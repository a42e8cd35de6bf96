package org.rdmaconnector.connector;

import java.time.Duration;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A posted send, receive, RDMA write or read: its {@link Completion} completes once, when its work completion arrives (successful or
 * not) or when its endpoint closes first (then {@link #result()} has status {@code IBV_WC_WR_FLUSH_ERR}), or when
 * it can never complete because its device was removed (then {@link #failure()} says so, {@link #result()} is
 * flushed, and {@link #await} throws). Made by the connector; thread-safe.
 */
@ProviderType
public interface WorkRequest {
    /** What was posted. */
    enum Kind {
        /** A send (also the staged {@code send(byte[])}). */
        SEND,
        /** A receive. */
        RECEIVE,
        /** An RDMA WRITE, with or without immediate data. */
        RDMA_WRITE,
        /** An RDMA READ. */
        RDMA_READ
    }

    /** The work request id the connector posted it with. */
    long wrId();

    /** What was posted. */
    Kind kind();

    /** Completes once the request is done: wait on it, or poll it with {@code tryWaitForCompletion()}. */
    Completion completion();

    /** Whether the request is done (does not consume the completion). */
    boolean isDone();

    /** The work completion, or null while the request is in flight. */
    WorkCompletion result();

    /** For a receive into the endpoint's own slot: a copy of the bytes received; otherwise null. */
    byte[] data();

    /** Why the request ended without a work completion of its own (its device was removed), or null. */
    RdmaException failure();

    /**
     * Waits up to {@code timeout} for the request and returns its work completion, or null on timeout. Consumes the
     * completion's count like {@link Completion#waitForCompletion(Duration)}. On a connection from a connection
     * factory, the waiting thread first polls the connection's completion queue itself, for up to the connector's
     * busy-poll budget ({@code BusyPollMicros}), before it sleeps.
     *
     * @throws RdmaException the {@link #failure()} of a request that can never complete (ENODEV, "device removed")
     */
    WorkCompletion await(Duration timeout) throws InterruptedException;
}
