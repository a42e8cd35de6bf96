package org.rdmaconnector.connector.spi;

import java.util.ArrayDeque;
import java.util.Deque;

/** Things opened one after another, closed newest first; the first failure is thrown with the others suppressed. */
final class AutoCloseableStack {
    private final Deque<AutoCloseable> opened = new ArrayDeque<>();

    <T extends AutoCloseable> T push(T resource) {
        opened.push(resource);
        return resource;
    }

    /**
     * Closes everything pushed, newest first. With {@code primary} (the error that stopped the opening) failures are
     * added to it as suppressed; without, the first failure is thrown after all are closed.
     */
    void closeAll(Throwable primary) {
        RuntimeException failure = null;
        for (AutoCloseable resource; (resource = opened.poll()) != null; ) {
            try {
                resource.close();
            } catch (Exception e) {
                if (primary != null) {
                    primary.addSuppressed(e);
                } else if (failure == null) {
                    failure = e instanceof RuntimeException r ? r : new IllegalStateException(e);
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
