package org.rdmaconnector.osgi.internal;

/**
 * A pooled connection factory (one factory configuration, a {@link org.rdmaconnector.osgi.ConnectionPool}) as JMX
 * shows it ({@code org.rdmaconnector:type=ConnectionPool,pid="..."}): its configuration, device and counters.
 */
public interface ConnectionPoolMXBean {
    /** The factory configuration's PID. */
    String getPid();

    /** Device, port and pool bounds, and whether the device is there now. */
    String getStatus();

    /** Sets kept open at least. */
    int getMinSize();

    /** Sets at most. */
    int getMaxSize();

    /** Sets open and idle now. */
    int getIdle();

    /** Sets lent out now. */
    int getBorrowed();

    /** Sets opened so far. */
    long getOpened();

    /** Sets destroyed so far (idle too long, unhealthy, or the pool closed). */
    long getDestroyed();

    /** Borrows so far. */
    long getBorrows();

    /** Borrows that had to wait for a set. */
    long getWaits();

    /** Borrows that waited for the borrow timeout and failed. */
    long getTimeouts();

    /** Sets found unhealthy (their device removed, their events no longer read) and discarded. */
    long getInvalid();
}
