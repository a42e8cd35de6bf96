package org.rdmaconnector.connector.spi;

import java.util.List;
import org.rdmaconnector.verbs.RnrTimer;

/**
 * One invalid setting: the property it is about (as the connector's configuration names it, e.g. {@code CqDepth})
 * and a sentence naming it and why, so callers can point at the property without reading the sentence.
 *
 * @param property the property name, capitalized as in ra.xml
 * @param message one sentence naming the property and the allowed values
 */
public record SettingProblem(String property, String message) {
    /** The message. */
    @Override
    public String toString() {
        return message;
    }

    /**
     * Throws when there are problems.
     *
     * @param what what the settings are, e.g. {@code "invalid RDMA listener settings"}
     * @throws IllegalArgumentException "what: first; second; ..." when {@code problems} is not empty
     */
    static void throwIfAny(String what, List<SettingProblem> problems) {
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(what + ": " + join(problems));
        }
    }

    /** The messages, separated by "; ". */
    public static String join(List<SettingProblem> problems) {
        return String.join("; ", problems.stream().map(SettingProblem::message).toList());
    }

    /** Adds a problem naming {@code property} when {@code value} is not from {@code min} to {@code max}. */
    static void checkRange(List<SettingProblem> problems, String property, long value, long min, long max) {
        if (value < min || value > max) {
            problems.add(new SettingProblem(property, property + " must be from " + min + " to " + max + ", was "
                + value));
        }
    }

    /**
     * Adds a problem naming {@code property} when {@code micros} is neither 0 (the RDMA CM's RNR timer) nor an RNR
     * timer's range, {@link RnrTimer#MIN_MICROS} to {@link RnrTimer#MAX_MICROS}.
     */
    static void checkRnrTimer(List<SettingProblem> problems, String property, int micros) {
        if (micros != 0 && (micros < RnrTimer.MIN_MICROS || micros > RnrTimer.MAX_MICROS)) {
            problems.add(new SettingProblem(property, property + " must be 0 (the RDMA CM's 655.36 ms) or from "
                + RnrTimer.MIN_MICROS + " to " + RnrTimer.MAX_MICROS + " microseconds, was " + micros));
        }
    }
}
