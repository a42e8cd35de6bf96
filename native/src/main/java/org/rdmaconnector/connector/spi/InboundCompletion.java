package org.rdmaconnector.connector.spi;

import org.rdmaconnector.connector.InboundConnection;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;

/**
 * A delivered completion of an accepted connection. A received message's bytes stay where the device put them, in
 * the connection's receive slot, while the completion is delivered: {@link #data()} and {@link #copyData} read them
 * there, and the slot is posted again only once the delivery is through ({@link #delivered()}). From then on the
 * completion answers from a copy of its own, made then unless a listener took the bytes with {@code copyData}
 * during the delivery (a listener that copies every message into an array of its own allocates nothing for it).
 * It is its delivery's {@link Deliveries.Done} too ({@link Through}): the connector's, run when every endpoint is
 * through, and no {@link Runnable} a listener could run.
 */
final class InboundCompletion extends Through implements MessageCompletion {
    /** Its connection's side: where a received message's bytes are read, and what the delivery's end does. */
    interface Owner {
        /** Copies {@code length} bytes of {@code receive}'s message to {@code destination} at {@code offset}. */
        void read(WorkRequest receive, byte[] destination, int offset, int length);

        /** The delivery of {@code completion} is through (once); {@code wasHeld} as {@link Through#over} says. */
        void through(InboundCompletion completion, boolean wasHeld);
    }

    private final InboundConnection connection;
    private final Owner owner;
    private final WorkCompletion workCompletion;
    private final boolean receive;
    // the receive that took the message (or the peer's immediate data), posted again once through; null: none
    private final WorkRequest message;
    private final int length;
    private final long sequence;
    // guarded by this: the completion's own copy, whether copyData took the bytes, whether the delivery is through
    private byte[] kept;
    private boolean taken;
    private boolean through;

    /**
     * @param message the receive that succeeded, whose slot holds the {@code length} bytes received (0 for the
     *     peer's RDMA WRITE with immediate data); null for a send, write or read, or a failure
     */
    InboundCompletion(InboundConnection connection, Owner owner, WorkCompletion workCompletion, boolean receive,
                      WorkRequest message, int length, long sequence) {
        this.connection = connection;
        this.owner = owner;
        this.workCompletion = workCompletion;
        this.receive = receive;
        this.message = message;
        this.length = message == null ? 0 : length;
        this.sequence = sequence;
    }

    @Override
    public InboundConnection connection() {
        return connection;
    }

    @Override
    public WorkCompletion workCompletion() {
        return workCompletion;
    }

    @Override
    public boolean isReceive() {
        return receive;
    }

    @Override
    public long sequence() {
        return sequence;
    }

    @Override
    public byte[] data() {
        if (length == 0) {
            return new byte[0];
        }
        synchronized (this) {
            if (kept == null) {
                requireBytes();
                kept = read();
            }
            return kept.clone();
        }
    }

    @Override
    public int dataLength() {
        return length;
    }

    @Override
    public int copyData(byte[] destination, int offset) {
        if (destination == null) {
            throw new IllegalArgumentException("destination must not be null");
        }
        if (offset < 0 || offset > destination.length - length) {
            throw new IndexOutOfBoundsException("the " + length + " bytes received do not fit at offset " + offset
                + " of an array of " + destination.length + " bytes");
        }
        if (length == 0) {
            return 0;
        }
        synchronized (this) {
            if (kept != null) {
                System.arraycopy(kept, 0, destination, offset, length);
            } else {
                requireBytes();
                owner.read(message, destination, offset, length);
                taken = true;
            }
        }
        return length;
    }

    /** The receive that succeeded (its slot to be posted again), or null. */
    WorkRequest message() {
        return message;
    }

    /**
     * The delivery is through (every endpoint has returned, or given it up): the bytes are copied out of the slot
     * unless a listener took them, before the slot is posted again. Once.
     */
    synchronized void delivered() {
        if (through) {
            return;
        }
        through = true;
        if (length > 0 && kept == null && !taken) {
            kept = read();
        }
    }

    @Override
    void over(boolean wasHeld) {
        owner.through(this, wasHeld);
    }

    private byte[] read() {
        byte[] bytes = new byte[length];
        owner.read(message, bytes, 0, length);
        return bytes;
    }

    private void requireBytes() {
        if (through) { // and no copy was kept
            throw new IllegalStateException("the " + length + " bytes of " + this + (taken
                ? " were taken with copyData during its delivery, and the completion keeps no copy of them after it "
                + "(call data() during the delivery to keep one)"
                : " could not be kept after its delivery (see the log)"));
        }
    }

    @Override
    public String toString() {
        return (receive ? "receive " : "send ") + sequence + " of connection " + connection.number() + " ("
            + workCompletion.opcode() + ", " + workCompletion.statusText() + ", " + workCompletion.byteLength()
            + " bytes" + (workCompletion.hasImmediate() ? ", immediate " + workCompletion.immediateData() : "") + ")";
    }
}
