package org.rdmaconnector.connector.spi;

/**
 * Thrown by an {@link EndpointSink} whose endpoint cannot take a delivery now (its application is still starting, a
 * JCA {@code UnavailableException}): not a failure of the delivery. The activation keeps the event, waits with
 * backoff and tries again until the endpoint is available or the activation is closed.
 */
public final class EndpointUnavailableException extends Exception {
    private static final long serialVersionUID = 1L;

    /** An endpoint unavailable because of {@code cause}. */
    public EndpointUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
