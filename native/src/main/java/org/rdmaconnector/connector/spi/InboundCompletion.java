package org.rdmaconnector.connector.spi;

import org.rdmaconnector.connector.InboundConnection;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.WorkCompletion;

/** A delivered completion of an accepted connection. */
record InboundCompletion(InboundConnection connection, WorkCompletion workCompletion, boolean isReceive,
                         byte[] received, long sequence) implements MessageCompletion {
    @Override
    public byte[] data() {
        return received == null ? new byte[0] : received.clone();
    }

    @Override
    public int dataLength() {
        return received == null ? 0 : received.length;
    }

    @Override
    public int copyData(byte[] destination, int offset) {
        int length = dataLength();
        if (destination == null) {
            throw new IllegalArgumentException("destination must not be null");
        }
        if (offset < 0 || offset > destination.length - length) {
            throw new IndexOutOfBoundsException("the " + length + " bytes received do not fit at offset " + offset
                + " of an array of " + destination.length + " bytes");
        }
        if (length > 0) {
            System.arraycopy(received, 0, destination, offset, length);
        }
        return length;
    }

    @Override
    public String toString() {
        return (isReceive ? "receive " : "send ") + sequence + " of connection " + connection.number() + " ("
            + workCompletion.opcode() + ", " + workCompletion.statusText() + ", " + workCompletion.byteLength()
            + " bytes" + (workCompletion.hasImmediate() ? ", immediate " + workCompletion.immediateData() : "") + ")";
    }
}
