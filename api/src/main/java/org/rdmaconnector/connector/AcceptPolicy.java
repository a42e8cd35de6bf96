package org.rdmaconnector.connector;

import java.util.Arrays;
import java.util.Locale;

/** What a listener does with a CONNECT_REQUEST from an allowed peer. */
public enum AcceptPolicy {
    /** Accept every request (the queue pair and receives are set up first). */
    ACCEPT,
    /** Reject every request; the CmEventListener endpoints still see it. */
    REJECT,
    /**
     * The CmEventListener endpoints decide by calling {@link ConnectionEvent#accept()} or
     * {@link ConnectionEvent#reject(byte[])} while the request is delivered; a request nobody accepted is rejected.
     */
    ENDPOINT_DECIDES;

    /** Parses {@code accept}, {@code reject} or {@code endpoint-decides} (any case, '-' or '_'). */
    public static AcceptPolicy parse(String text) {
        String name = text == null ? "" : text.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (AcceptPolicy policy : values()) {
            if (policy.name().equals(name)) {
                return policy;
            }
        }
        throw new IllegalArgumentException("accept policy '" + text + "' is not one of "
            + Arrays.stream(values()).map(AcceptPolicy::text).toList());
    }

    /** The policy as a property value: {@code accept}, {@code reject} or {@code endpoint-decides}. */
    public String text() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
