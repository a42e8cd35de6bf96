package org.rdmaconnector.connector.spi;

import java.lang.invoke.VarHandle;
import org.rdmaconnector.connector.InboundConnection;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.verbs.jna.Layout;

/**
 * A delivered completion of an accepted connection: a view of the work request it completed, valid during its
 * delivery only. A received message's bytes stay where the device put them, in the connection's receive slot, and
 * its work completion in the receive's request, which is posted again into that slot once the delivery is through
 * ({@link PostedRequest#reposted}): nothing is copied unless a listener asks ({@link #data()},
 * {@link #workCompletion()}), so one small object is all a delivery makes. Once the delivery is through every
 * method throws {@link IllegalStateException}; a read that races the delivery's end throws too rather than answer
 * from a later message. It is its delivery's {@link Deliveries.Done} too ({@link Through}): the connector's, run
 * when every endpoint is through, and no {@link Runnable} a listener could run.
 */
final class InboundCompletion extends Through implements MessageCompletion {
    /** Its connection's side: the connection, where a received message's bytes are read, the delivery's end. */
    interface Owner {
        /** The connection the completion belongs to. */
        InboundConnection connection();

        /** Copies {@code length} bytes of {@code receive}'s message to {@code destination} at {@code offset}. */
        void read(WorkRequest receive, byte[] destination, int offset, int length);

        /** The delivery of {@code completion} is through (once); {@code wasHeld} as {@link Through#over} says. */
        void through(InboundCompletion completion, boolean wasHeld);
    }

    private final Owner owner;
    // done, holding its work completion: a receive's is posted again into its slot once through, and reused
    private final PostedRequest request;
    private final long sequence;

    /** The delivery of {@code request}'s completion, the {@code sequence}-th of its kind on the connection. */
    InboundCompletion(Owner owner, PostedRequest request, long sequence) {
        this.owner = owner;
        this.request = request;
        this.sequence = sequence;
    }

    @Override
    public InboundConnection connection() {
        requireDelivering();
        return owner.connection();
    }

    @Override
    public WorkCompletion workCompletion() {
        requireDelivering();
        WorkCompletion made = request.result();
        stillDelivering(); // not that of a later message, made from the request reused meanwhile
        return made;
    }

    @Override
    public boolean isReceive() {
        requireDelivering();
        return request.kind() == WorkRequest.Kind.RECEIVE;
    }

    @Override
    public boolean isSuccess() {
        requireDelivering();
        boolean success = request.status() == Layout.IBV_WC_SUCCESS;
        stillDelivering();
        return success;
    }

    @Override
    public long sequence() {
        requireDelivering();
        return sequence;
    }

    @Override
    public byte[] data() {
        int length = dataLength();
        byte[] bytes = new byte[length];
        read(bytes, 0, length);
        return bytes;
    }

    @Override
    public int dataLength() {
        requireDelivering();
        int length = length();
        stillDelivering();
        return length;
    }

    @Override
    public int copyData(byte[] destination, int offset) {
        if (destination == null) {
            throw new IllegalArgumentException("destination must not be null");
        }
        int length = dataLength();
        if (offset < 0 || offset > destination.length - length) {
            throw new IndexOutOfBoundsException("the " + length + " bytes received do not fit at offset " + offset
                + " of an array of " + destination.length + " bytes");
        }
        read(destination, offset, length);
        return length;
    }

    /**
     * Reads the message's bytes in its slot. The bytes read were this delivery's, not a later message's in the same
     * slot, unless it was through meanwhile (the slot's lending and this read are ordered by the wire's lock): then
     * it throws, as it does when the read failed because of that.
     */
    private void read(byte[] destination, int offset, int length) {
        if (length == 0) {
            return;
        }
        try {
            owner.read(request, destination, offset, length);
        } catch (RuntimeException e) {
            requireDelivering();
            throw e;
        }
        requireDelivering();
    }

    /** The receive that took a message or the peer's immediate data (to be posted again once through), or null. */
    WorkRequest message() {
        return received() ? request : null;
    }

    private boolean received() {
        return request.kind() == WorkRequest.Kind.RECEIVE && request.status() == Layout.IBV_WC_SUCCESS;
    }

    /** The bytes in the receive's slot: none for a send, a failure, or the peer's RDMA WRITE with immediate data. */
    private int length() {
        return received() && request.opcode() != WcOpcode.RECV_RDMA_WITH_IMM ? request.byteLength() : 0;
    }

    @Override
    void over(boolean wasHeld) {
        owner.through(this, wasHeld);
    }

    /**
     * After reading the request's fields without its lock: the delivery is still not through, so they were this
     * delivery's (the request is posted again, and its fields changed, only after it is through).
     */
    private void stillDelivering() {
        VarHandle.acquireFence(); // the reads before it are not moved after the phase's
        requireDelivering();
    }

    private void requireDelivering() {
        if (isThrough()) {
            throw new IllegalStateException(this + " was delivered already: a MessageCompletion is valid during its "
                + "delivery only (take what you keep with data(), copyData or workCompletion() before it ends)");
        }
    }

    @Override
    public String toString() {
        String what = (request.kind() == WorkRequest.Kind.RECEIVE ? "receive " : "send ") + sequence
            + " of connection " + owner.connection().number();
        if (isThrough()) {
            return what; // the request may hold a later completion now
        }
        String fields = " (" + request.opcode() + ", " + WorkCompletion.statusText(request.status()) + ", "
            + request.byteLength() + " bytes" + ((request.flags() & WorkCompletion.WITH_IMM) != 0
            ? ", immediate " + request.immediateData() : "") + ")";
        VarHandle.acquireFence();
        return isThrough() ? what : what + fields;
    }
}
