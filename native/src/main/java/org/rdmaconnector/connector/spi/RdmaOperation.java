package org.rdmaconnector.connector.spi;

import org.rdmaconnector.connector.MemoryRegion;
import org.rdmaconnector.connector.RemoteAccess;
import org.rdmaconnector.connector.RemoteRegion;
import org.rdmaconnector.connector.WorkRequest;

/**
 * One RDMA WRITE, WRITE with immediate or READ as an application asked for it, checked before anything is posted:
 * both ranges lie inside their regions, the local region is open, and the peer registered its region for the access
 * the operation needs. What only the peer knows (whether the rkey is still valid) shows in the work completion.
 *
 * @param immediateData the immediate data of a WRITE_WITH_IMMEDIATE (host order), else 0
 * @param signaled whether it asks for a work completion of its own on success (see {@link SelectiveSignaling})
 */
record RdmaOperation(Opcode opcode, MemoryRegion local, int offset, int length, RemoteRegion remote,
                     int remoteOffset, int immediateData, boolean signaled) {
    /** The one-sided operations, with the remote access each needs. */
    enum Opcode {
        WRITE("RDMA WRITE", RemoteAccess.WRITE, WorkRequest.Kind.RDMA_WRITE),
        WRITE_WITH_IMMEDIATE("RDMA WRITE with immediate", RemoteAccess.WRITE, WorkRequest.Kind.RDMA_WRITE),
        READ("RDMA READ", RemoteAccess.READ, WorkRequest.Kind.RDMA_READ);

        final String text;
        final RemoteAccess needs;
        final WorkRequest.Kind kind;

        Opcode(String text, RemoteAccess needs, WorkRequest.Kind kind) {
            this.text = text;
            this.needs = needs;
            this.kind = kind;
        }
    }

    /**
     * @throws IllegalArgumentException naming the argument and the reason: null, a range outside its region, a
     *     peer's region without the access needed
     * @throws IllegalStateException when the local region is closed
     */
    RdmaOperation {
        if (opcode == null) {
            throw new IllegalArgumentException("opcode must not be null");
        }
        if (local == null) {
            throw new IllegalArgumentException("local must not be null: the registered region the " + opcode.text
                + (opcode == Opcode.READ ? " reads into" : " writes from"));
        }
        if (remote == null) {
            throw new IllegalArgumentException("remote must not be null: the peer's region (RemoteRegion) the "
                + opcode.text + (opcode == Opcode.READ ? " reads" : " writes to"));
        }
        if (local.isClosed()) {
            throw new IllegalStateException("the local memory region of " + opcode.text + " is closed");
        }
        if (outside(offset, length, local.length())) {
            throw outsideRegion("local", offset, length, "the local memory region", local.length());
        }
        if (outside(remoteOffset, length, remote.length())) { // remote.toString() only then: this runs per post
            throw outsideRegion("remote", remoteOffset, length, "the peer's " + remote, remote.length());
        }
        if (!remote.allows(opcode.needs)) {
            throw new IllegalArgumentException(opcode.text + " to the peer's " + remote + " is refused: the peer "
                + "registered it without RemoteAccess." + opcode.needs);
        }
    }

    private static boolean outside(int offset, int length, int regionLength) {
        return offset < 0 || length < 0 || offset > regionLength - length;
    }

    private static IllegalArgumentException outsideRegion(String name, int offset, int length, String region,
                                                          int regionLength) {
        return new IllegalArgumentException(name + " range [" + offset + ", " + offset + " + " + length
            + ") is outside " + region + " of " + regionLength + " bytes");
    }

    static RdmaOperation write(MemoryRegion local, int offset, int length, RemoteRegion remote, int remoteOffset,
                               boolean signaled) {
        return new RdmaOperation(Opcode.WRITE, local, offset, length, remote, remoteOffset, 0, signaled);
    }

    static RdmaOperation writeWithImmediate(MemoryRegion local, int offset, int length, RemoteRegion remote,
                                            int remoteOffset, int immediateData, boolean signaled) {
        return new RdmaOperation(Opcode.WRITE_WITH_IMMEDIATE, local, offset, length, remote, remoteOffset,
            immediateData, signaled);
    }

    static RdmaOperation read(MemoryRegion local, int offset, int length, RemoteRegion remote, int remoteOffset,
                              boolean signaled) {
        return new RdmaOperation(Opcode.READ, local, offset, length, remote, remoteOffset, 0, signaled);
    }

    /** The kind of the work request it is posted as. */
    WorkRequest.Kind kind() {
        return opcode.kind;
    }

    /** The address of the first remote byte. */
    long remoteAddress() {
        return remote.address() + remoteOffset;
    }
}
