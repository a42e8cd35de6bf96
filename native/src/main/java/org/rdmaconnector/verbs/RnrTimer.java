package org.rdmaconnector.verbs;

/**
 * A receiver-not-ready NAK timer ({@code min_rnr_timer}, ibv_modify_qp(3)): when a message arrives at a reliable
 * connection that has no receive posted, the responder answers with an RNR NAK carrying this timer, and the
 * requester waits that long before it sends again. InfiniBand encodes it in five bits; the delays below are the
 * specification's (IBTA 1.4 table 45, the kernel's {@code IB_RNR_TIMER_*}). Code 0 is the longest, 655.36 ms, and is
 * what the RDMA CM gives every connection it moves to RTR.
 *
 * @param code the five-bit code, from 0 to 31
 */
public record RnrTimer(int code) {
    // the delay of each code in microseconds
    private static final int[] MICROS = {
        655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560, 3_840, 5_120,
        7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840, 245_760, 327_680, 491_520,
    };

    /** The RDMA CM's choice for every connection: code 0, 655.36 ms. */
    public static final RnrTimer CM_DEFAULT = new RnrTimer(0);
    /** The longest delay a timer can have, in microseconds (code 0). */
    public static final int MAX_MICROS = MICROS[0];
    /** The shortest delay a timer can have, in microseconds (code 1). */
    public static final int MIN_MICROS = MICROS[1];

    /** Validates the code. */
    public RnrTimer {
        if (code < 0 || code > 31) {
            throw new IllegalArgumentException("an RNR timer code is from 0 to 31, was " + code);
        }
    }

    /**
     * The shortest timer of at least {@code micros} microseconds, so that a requester never waits less than asked.
     *
     * @throws IllegalArgumentException when {@code micros} is not from {@link #MIN_MICROS} to {@link #MAX_MICROS}
     */
    public static RnrTimer atLeastMicros(int micros) {
        if (micros < MIN_MICROS || micros > MAX_MICROS) {
            throw new IllegalArgumentException("an RNR timer is from " + MIN_MICROS + " to " + MAX_MICROS
                + " microseconds, was " + micros);
        }
        int best = 0;
        for (int code = 1; code < MICROS.length; code++) {
            if (MICROS[code] >= micros && MICROS[code] < MICROS[best]) {
                best = code;
            }
        }
        return new RnrTimer(best);
    }

    /** The delay in microseconds. */
    public int micros() {
        return MICROS[code];
    }

    /** For example "0.64 ms (code 12)". */
    @Override
    public String toString() {
        return String.format(java.util.Locale.ROOT, "%.2f ms (code %d)", micros() / 1000.0, code);
    }
}
