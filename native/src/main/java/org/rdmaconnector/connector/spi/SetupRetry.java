package org.rdmaconnector.connector.spi;

import java.time.Duration;
import java.util.List;

/**
 * How a listener retries its setup (listening) while it cannot listen (no device, the address not on a device, the
 * address and port in use): the first pause, doubled after each failed try up to the longest pause, for a number of
 * tries (0 = forever), after which the activation reports {@link Activation.State#GAVE_UP}. The defaults are
 * {@link ListenerSettings}' {@code DEFAULT_SETUP_*}.
 *
 * @param intervalMillis the pause after the first failed try, from 1 ms to one hour
 * @param maxIntervalMillis the longest pause, from {@code intervalMillis} to one hour
 * @param attempts tries before giving up, 0 for no limit
 */
public record SetupRetry(int intervalMillis, int maxIntervalMillis, int attempts) {
    /** The defaults: 1 s doubling to 30 s, forever. */
    public static final SetupRetry DEFAULTS = new SetupRetry(ListenerSettings.DEFAULT_SETUP_INTERVAL_MILLIS,
        ListenerSettings.DEFAULT_SETUP_MAX_INTERVAL_MILLIS, ListenerSettings.DEFAULT_SETUP_ATTEMPTS);
    private static final int MAX_MILLIS = 3_600_000;
    private static final int MAX_ATTEMPTS = 1_000_000;

    /** The same, each null value taken from {@code defaults}. */
    public static SetupRetry of(Integer intervalMillis, Integer maxIntervalMillis, Integer attempts,
                                SetupRetry defaults) {
        return new SetupRetry(intervalMillis != null ? intervalMillis : defaults.intervalMillis,
            maxIntervalMillis != null ? maxIntervalMillis : defaults.maxIntervalMillis,
            attempts != null ? attempts : defaults.attempts);
    }

    /** Every problem, named SetupIntervalMillis, SetupMaxIntervalMillis or SetupAttempts. */
    public List<SettingProblem> problems() {
        List<SettingProblem> problems = new java.util.ArrayList<>();
        SettingProblem.checkRange(problems, "SetupIntervalMillis", intervalMillis, 1, MAX_MILLIS);
        SettingProblem.checkRange(problems, "SetupMaxIntervalMillis", maxIntervalMillis, 1, MAX_MILLIS);
        SettingProblem.checkRange(problems, "SetupAttempts", attempts, 0, MAX_ATTEMPTS);
        if (maxIntervalMillis < intervalMillis) {
            problems.add(new SettingProblem("SetupMaxIntervalMillis", "SetupMaxIntervalMillis (" + maxIntervalMillis
                + ") must not be smaller than SetupIntervalMillis (" + intervalMillis + ")"));
        }
        return problems;
    }

    /**
     * The pause after failed try number {@code failures} (from 1), or null when that was the last try.
     */
    public Duration pauseAfter(int failures) {
        if (attempts != 0 && failures >= attempts) {
            return null;
        }
        long pause = intervalMillis;
        for (int i = 1; i < failures && pause < maxIntervalMillis; i++) {
            pause *= 2;
        }
        return Duration.ofMillis(Math.min(pause, maxIntervalMillis));
    }

    /** For people: "1000 ms doubling to 30000 ms, forever" or "..., 3 tries". */
    public String describe() {
        return intervalMillis + " ms doubling to " + maxIntervalMillis + " ms, "
            + (attempts == 0 ? "forever" : attempts + " tries");
    }
}
