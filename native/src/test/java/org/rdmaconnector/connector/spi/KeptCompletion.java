package org.rdmaconnector.connector.spi;

import org.rdmaconnector.connector.InboundConnection;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.WorkCompletion;

/**
 * What a test keeps of a delivered completion, taken during its delivery (a {@link MessageCompletion} is valid during
 * its delivery only), to assert on after it.
 */
public record KeptCompletion(InboundConnection connection, WorkCompletion workCompletion, boolean isReceive,
                             byte[] kept, long sequence, String name) implements MessageCompletion {
    /** Takes everything of {@code completion}, during its delivery. */
    public static KeptCompletion of(MessageCompletion completion) {
        return new KeptCompletion(completion.connection(), completion.workCompletion(), completion.isReceive(),
            completion.data(), completion.sequence(), completion.toString());
    }

    @Override
    public byte[] data() {
        return kept.clone();
    }

    @Override
    public int dataLength() {
        return kept.length;
    }

    @Override
    public int copyData(byte[] destination, int offset) {
        System.arraycopy(kept, 0, destination, offset, kept.length);
        return kept.length;
    }

    @Override
    public String toString() {
        return name;
    }
}
