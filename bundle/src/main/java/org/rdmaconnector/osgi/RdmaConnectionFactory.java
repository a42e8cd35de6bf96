package org.rdmaconnector.osgi;

import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.spi.Pool;

/**
 * A pooled connection factory service, registered for each factory configuration of PID {@value #FACTORY_PID}; the
 * handle API is the resource adapter's. Its service properties carry the configuration ({@code deviceName}, ...).
 */
public interface RdmaConnectionFactory {
    /** The Config Admin factory PID of the factories. */
    String FACTORY_PID = "org.rdmaconnector.connection";

    /**
     * A handle on a pooled channel set; close it to give the set back.
     *
     * @throws org.rdmaconnector.verbs.RdmaException when no set can be opened (the device named, with the errno)
     * @throws IllegalStateException when all sets are in use past the borrow timeout
     */
    RdmaConnection getConnection();

    /** What the pool holds and has done. */
    Pool.Counters counters();

    /** One line for people: the device, the pool sizes, and what is missing when the device is. */
    String status();
}
