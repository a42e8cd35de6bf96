package org.rdmaconnector.verbs;

/**
 * Queue pair sizes ({@code struct ibv_qp_cap}, ibv_create_qp(3)); after creation, what the device granted.
 *
 * @param maxSendWr outstanding send work requests, at least 1
 * @param maxRecvWr outstanding receive work requests, at least 1
 * @param maxSendSge scatter/gather entries per send, at least 1
 * @param maxRecvSge scatter/gather entries per receive, at least 1
 * @param maxInlineData bytes a send may carry inline, at least 0
 */
public record QueuePairCapabilities(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge,
                                    int maxInlineData) {
    /** Validates the ranges. */
    public QueuePairCapabilities {
        positive("maxSendWr", maxSendWr);
        positive("maxRecvWr", maxRecvWr);
        positive("maxSendSge", maxSendSge);
        positive("maxRecvSge", maxRecvSge);
        if (maxInlineData < 0) {
            throw new IllegalArgumentException("maxInlineData must be at least 0, was " + maxInlineData);
        }
    }

    private static void positive(String name, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + " must be at least 1, was " + value);
        }
    }

    /** {@code sendWr} sends and {@code recvWr} receives, one scatter/gather entry each, no inline data. */
    public static QueuePairCapabilities of(int sendWr, int recvWr) {
        return new QueuePairCapabilities(sendWr, recvWr, 1, 1, 0);
    }
}
