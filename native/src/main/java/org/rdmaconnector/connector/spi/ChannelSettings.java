package org.rdmaconnector.connector.spi;

import java.util.ArrayList;
import java.util.List;

/**
 * How a {@link ChannelSet} is opened: the connection definition's configuration. The {@code DEFAULT_*} constants
 * are the one source of its defaults (ra.xml and the OSGi metatype are tested against them).
 *
 * @param deviceName the device, or null for the first device whose port {@code portNumber} is ACTIVE
 * @param portNumber the port, from 1
 * @param cqDepth completion queue entries (at least the send plus receive depth of the endpoints it serves)
 * @param completionVector the completion vector of the queue, from 0
 * @param maxSendWr send work requests per queue pair
 * @param maxRecvWr receive work requests per queue pair
 * @param maxInlineData a staged message up to this many bytes is sent inline (IBV_SEND_INLINE); 0 never
 * @param maxRegisteredBytes the limit on memory registered through one set (its endpoints' slots included)
 * @param ackTimeout the queue pairs' local ACK timeout, 4.096 us x 2^ackTimeout, after which a packet the peer did
 *     not acknowledge is sent again (rdma_set_option(3) RDMA_OPTION_ID_ACK_TIMEOUT); 0 leaves the RDMA CM's choice
 *     (on RoCE about half a second, so every lost packet costs that long)
 * @param minRnrTimerMicros what the endpoints' receiver-not-ready NAKs make the peer wait before it sends again,
 *     in microseconds, rounded up to an InfiniBand RNR timer ({@link org.rdmaconnector.verbs.RnrTimer}); 0 leaves
 *     the RDMA CM's 655.36 ms
 */
public record ChannelSettings(String deviceName, int portNumber, int cqDepth, int completionVector, int maxSendWr,
                              int maxRecvWr, int maxInlineData, long maxRegisteredBytes, int ackTimeout,
                              int minRnrTimerMicros) {
    /** Default PortNumber. */
    public static final int DEFAULT_PORT_NUMBER = 1;
    /** Default CqDepth: the default MaxSendWr plus MaxRecvWr of two endpoints. */
    public static final int DEFAULT_CQ_DEPTH = 256;
    /** Default CompletionVector. */
    public static final int DEFAULT_COMPLETION_VECTOR = 0;
    /** Default MaxSendWr. */
    public static final int DEFAULT_MAX_SEND_WR = 64;
    /** Default MaxRecvWr. */
    public static final int DEFAULT_MAX_RECV_WR = 64;
    /** Default MaxInlineData. */
    public static final int DEFAULT_MAX_INLINE_DATA = 0;
    /** Default MaxRegisteredBytes: 64 MiB. */
    public static final long DEFAULT_MAX_REGISTERED_BYTES = 64L << 20;
    /** Default AckTimeout: 0, the RDMA CM's own. */
    public static final int DEFAULT_ACK_TIMEOUT = 0;
    /** Default MinRnrTimerMicros: 640, rdma-core's ibv_rc_pingpong's timer (code 12). */
    public static final int DEFAULT_MIN_RNR_TIMER_MICROS = 640;

    /** The defaults: the first active device and the {@code DEFAULT_*} values. */
    public static final ChannelSettings DEFAULTS = new ChannelSettings(null, DEFAULT_PORT_NUMBER, DEFAULT_CQ_DEPTH,
        DEFAULT_COMPLETION_VECTOR, DEFAULT_MAX_SEND_WR, DEFAULT_MAX_RECV_WR, DEFAULT_MAX_INLINE_DATA,
        DEFAULT_MAX_REGISTERED_BYTES, DEFAULT_ACK_TIMEOUT, DEFAULT_MIN_RNR_TIMER_MICROS);

    /** Normalizes an empty device name to null (the first active device). */
    public ChannelSettings {
        deviceName = deviceName == null || deviceName.isBlank() ? null : deviceName.trim();
    }

    /** Settings with AckTimeout and MinRnrTimerMicros at their defaults. */
    public ChannelSettings(String deviceName, int portNumber, int cqDepth, int completionVector, int maxSendWr,
                           int maxRecvWr, int maxInlineData, long maxRegisteredBytes) {
        this(deviceName, portNumber, cqDepth, completionVector, maxSendWr, maxRecvWr, maxInlineData,
            maxRegisteredBytes, DEFAULT_ACK_TIMEOUT, DEFAULT_MIN_RNR_TIMER_MICROS);
    }

    /** These settings with {@code value} as AckTimeout. */
    public ChannelSettings withAckTimeout(int value) {
        return new ChannelSettings(deviceName, portNumber, cqDepth, completionVector, maxSendWr, maxRecvWr,
            maxInlineData, maxRegisteredBytes, value, minRnrTimerMicros);
    }

    /** These settings with {@code value} as MinRnrTimerMicros. */
    public ChannelSettings withMinRnrTimerMicros(int value) {
        return new ChannelSettings(deviceName, portNumber, cqDepth, completionVector, maxSendWr, maxRecvWr,
            maxInlineData, maxRegisteredBytes, ackTimeout, value);
    }

    /** Every problem of these settings, each naming its property; empty when valid. */
    public List<SettingProblem> problems() {
        List<SettingProblem> problems = new ArrayList<>();
        SettingProblem.checkRange(problems, "PortNumber", portNumber, 1, 255);
        SettingProblem.checkRange(problems, "CqDepth", cqDepth, 1, 4_194_304);
        SettingProblem.checkRange(problems, "CompletionVector", completionVector, 0, 1023);
        SettingProblem.checkRange(problems, "MaxSendWr", maxSendWr, 1, 65_536);
        SettingProblem.checkRange(problems, "MaxRecvWr", maxRecvWr, 1, 65_536);
        SettingProblem.checkRange(problems, "MaxInlineData", maxInlineData, 0, 65_536);
        SettingProblem.checkRange(problems, "AckTimeout", ackTimeout, 0, 31);
        SettingProblem.checkRnrTimer(problems, "MinRnrTimerMicros", minRnrTimerMicros);
        if (maxRegisteredBytes < 1) {
            problems.add(new SettingProblem("MaxRegisteredBytes", "MaxRegisteredBytes must be positive, was "
                + maxRegisteredBytes));
        }
        if ((long) maxSendWr + maxRecvWr > cqDepth) {
            problems.add(new SettingProblem("CqDepth", "CqDepth (" + cqDepth + ") must hold MaxSendWr + MaxRecvWr ("
                + maxSendWr + " + " + maxRecvWr + ") completions of one endpoint"));
        }
        return problems;
    }

    /**
     * Throws when {@link #problems()} finds any.
     *
     * @throws IllegalArgumentException listing every problem
     */
    public ChannelSettings validate() {
        SettingProblem.throwIfAny("invalid RDMA connection settings", problems());
        return this;
    }

    /** The device as people should read it in messages. */
    public String deviceDescription() {
        return deviceName == null ? "the first device with port " + portNumber + " ACTIVE" : "device " + deviceName;
    }
}
