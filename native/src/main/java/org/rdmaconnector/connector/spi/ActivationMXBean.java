package org.rdmaconnector.connector.spi;

/**
 * An endpoint activation as JMX shows it ({@code org.rdmaconnector:type=Activation,...}): whether it listens or
 * waits for its device, and its counters.
 */
public interface ActivationMXBean {
    /** The endpoint (activation name or MDB class). */
    String getEndpoint();

    /** The listen address and port. */
    String getListenAddress();

    /** WAITING_FOR_DEVICE, ADDRESS_IN_USE, LISTENING or STOPPED. */
    String getState();

    /** Why it waits (the last error and the next retry), or where it listens. */
    String getStateDetail();

    /** Events and completions the endpoint took. */
    long getDelivered();

    /** Delivery attempts that ended with an exception (an event attempted again counts each time). */
    long getErrors();

    /** Events never delivered (failed on every attempt, or the endpoint unavailable until deactivation). */
    long getUndeliverable();

    /** Deliveries running now. */
    int getInFlight();

    /** Connections the listener holds now. */
    int getConnections();

    /** Connection requests the listener rejected, by reason (see {@link Activation#rejections()}). */
    java.util.Map<String, Long> getRejections();
}
