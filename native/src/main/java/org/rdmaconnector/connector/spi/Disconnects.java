package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Closes connections that wait for their peer's answer to a disconnect (DREP, seen as DISCONNECTED) with one
 * deadline for all of them: every disconnect is sent first, then all are awaited until the one deadline, then
 * whatever is left is destroyed. So closing N connections to dead peers takes the wait once, not N times, on the
 * closing thread (defect 12). The native side stays behind {@link Disconnecting}, so host tests drive it.
 */
final class Disconnects {
    private static final System.Logger LOG = System.getLogger(Disconnects.class.getName());

    /** One connection being closed, by its one closer. */
    interface Disconnecting {
        /** Sends the disconnect; false when there is nothing to wait for (never connected, or already gone). */
        boolean disconnect();

        /** Waits until the peer answered or {@code deadline} ({@link System#nanoTime()}) passed; true if it answered. */
        boolean awaitDisconnected(long deadline) throws InterruptedException;

        /** Destroys the connection's resources, answered or not. */
        void destroy();
    }

    private Disconnects() {
    }

    /**
     * Disconnects all of {@code connections}, waits at most {@code wait} in total for their answers, and destroys
     * every one of them. A failing disconnect is logged and the connection destroyed anyway; an interrupt ends the
     * wait (the flag stays set); the first failure to destroy is thrown after all were destroyed.
     */
    static void closeAll(List<? extends Disconnecting> connections, Duration wait) {
        List<Disconnecting> waiting = new ArrayList<>();
        for (Disconnecting connection : connections) {
            try {
                if (connection.disconnect()) {
                    waiting.add(connection);
                }
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "disconnecting " + connection + " failed; destroying it", e);
            }
        }
        long deadline = System.nanoTime() + wait.toNanos();
        try {
            for (Disconnecting connection : waiting) {
                if (!connection.awaitDisconnected(deadline)) {
                    LOG.log(Level.WARNING, "no DISCONNECTED from " + connection + " within " + wait
                        + " (one wait for " + waiting.size() + " connections); destroying it anyway");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            destroyAll(connections);
        }
    }

    private static void destroyAll(List<? extends Disconnecting> connections) {
        RuntimeException first = null;
        for (Disconnecting connection : connections) {
            try {
                connection.destroy();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
