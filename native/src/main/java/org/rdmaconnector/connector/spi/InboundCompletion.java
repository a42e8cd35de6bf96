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
    public String toString() {
        return (isReceive ? "receive " : "send ") + sequence + " of connection " + connection.number() + " ("
            + workCompletion.opcode() + ", " + workCompletion.statusText() + ", " + workCompletion.byteLength()
            + " bytes" + (workCompletion.hasImmediate() ? ", immediate " + workCompletion.immediateData() : "") + ")";
    }
}
