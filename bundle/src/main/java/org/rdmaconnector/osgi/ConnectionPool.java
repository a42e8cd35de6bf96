package org.rdmaconnector.osgi;

import org.rdmaconnector.connector.spi.Pool;

/**
 * The operator's view of a pooled connection factory: one service per Config Admin factory configuration of
 * {@value #FACTORY_PID}, registered under this interface and, for applications, under
 * {@link org.rdmaconnector.connector.RdmaConnectionFactory} (the same object). Its service properties carry the
 * configuration ({@code deviceName}, {@code maxPoolSize}, ...).
 */
public interface ConnectionPool {
    /** The Config Admin factory PID of the pooled factories. */
    String FACTORY_PID = "org.rdmaconnector.connection";

    /** What the pool holds and has done. */
    Pool.Counters counters();

    /** One line for people: the device, the pool sizes, and what is missing when the device is. */
    String status();
}
