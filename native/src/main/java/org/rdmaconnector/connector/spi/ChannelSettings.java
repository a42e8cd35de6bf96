package org.rdmaconnector.connector.spi;

import java.util.ArrayList;
import java.util.List;

/**
 * How a {@link ChannelSet} is opened: the connection definition's configuration.
 *
 * @param deviceName the device, or null for the first device whose port {@code portNumber} is ACTIVE
 * @param portNumber the port, from 1
 * @param cqDepth completion queue entries (at least the send plus receive depth of the endpoints it serves)
 * @param completionVector the completion vector of the queue, from 0
 * @param maxSendWr send work requests per queue pair
 * @param maxRecvWr receive work requests per queue pair
 * @param maxInlineData bytes a send may carry inline
 * @param maxRegisteredBytes the limit on memory registered through one set (its endpoints' slots included)
 */
public record ChannelSettings(String deviceName, int portNumber, int cqDepth, int completionVector, int maxSendWr,
                              int maxRecvWr, int maxInlineData, long maxRegisteredBytes) {
    /** The defaults: first active device, port 1, 256 CQ entries, vector 0, 64/64 work requests, 0 inline, 64 MiB. */
    public static final ChannelSettings DEFAULTS = new ChannelSettings(null, 1, 256, 0, 64, 64, 0, 64L << 20);

    /** Normalizes an empty device name to null (the first active device). */
    public ChannelSettings {
        deviceName = deviceName == null || deviceName.isBlank() ? null : deviceName.trim();
    }

    /** Every problem of these settings, one sentence each naming the property; empty when valid. */
    public List<String> problems() {
        List<String> problems = new ArrayList<>();
        check(problems, "PortNumber", portNumber, 1, 255);
        check(problems, "CqDepth", cqDepth, 1, 4_194_304);
        check(problems, "CompletionVector", completionVector, 0, 1023);
        check(problems, "MaxSendWr", maxSendWr, 1, 65_536);
        check(problems, "MaxRecvWr", maxRecvWr, 1, 65_536);
        check(problems, "MaxInlineData", maxInlineData, 0, 65_536);
        if (maxRegisteredBytes < 1) {
            problems.add("MaxRegisteredBytes must be positive, was " + maxRegisteredBytes);
        }
        if ((long) maxSendWr + maxRecvWr > cqDepth) {
            problems.add("CqDepth (" + cqDepth + ") must hold MaxSendWr + MaxRecvWr (" + maxSendWr + " + " + maxRecvWr
                + ") completions of one endpoint");
        }
        return problems;
    }

    /**
     * Throws when {@link #problems()} finds any.
     *
     * @throws IllegalArgumentException listing every problem
     */
    public ChannelSettings validate() {
        List<String> problems = problems();
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid RDMA connection settings: " + String.join("; ", problems));
        }
        return this;
    }

    /** The device as people should read it in messages. */
    public String deviceDescription() {
        return deviceName == null ? "the first device with port " + portNumber + " ACTIVE" : "device " + deviceName;
    }

    static void check(List<String> problems, String name, long value, long min, long max) {
        if (value < min || value > max) {
            problems.add(name + " must be from " + min + " to " + max + ", was " + value);
        }
    }
}
