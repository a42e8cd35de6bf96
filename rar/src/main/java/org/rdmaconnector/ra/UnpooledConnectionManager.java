package org.rdmaconnector.ra;

import jakarta.resource.ResourceException;
import jakarta.resource.spi.ConnectionEvent;
import jakarta.resource.spi.ConnectionEventListener;
import jakarta.resource.spi.ConnectionManager;
import jakarta.resource.spi.ConnectionRequestInfo;
import jakarta.resource.spi.ManagedConnection;
import jakarta.resource.spi.ManagedConnectionFactory;

/**
 * The connection manager of the non-managed environment ({@code createConnectionFactory()} without a server): each
 * handle gets its own managed connection, destroyed when the handle closes or fails.
 */
final class UnpooledConnectionManager implements ConnectionManager {
    private static final long serialVersionUID = 1L;

    @Override
    public Object allocateConnection(ManagedConnectionFactory mcf, ConnectionRequestInfo info)
        throws ResourceException {
        ManagedConnection mc = mcf.createManagedConnection(null, info);
        mc.addConnectionEventListener(new ConnectionEventListener() {
            @Override
            public void connectionClosed(ConnectionEvent event) {
                destroy(mc);
            }

            @Override
            public void connectionErrorOccurred(ConnectionEvent event) {
                destroy(mc);
            }

            @Override
            public void localTransactionStarted(ConnectionEvent event) {
            }

            @Override
            public void localTransactionCommitted(ConnectionEvent event) {
            }

            @Override
            public void localTransactionRolledback(ConnectionEvent event) {
            }
        });
        try {
            return mc.getConnection(null, info);
        } catch (ResourceException | RuntimeException e) {
            destroy(mc);
            throw e;
        }
    }

    private static void destroy(ManagedConnection mc) {
        try {
            mc.destroy();
        } catch (ResourceException e) {
            System.getLogger(UnpooledConnectionManager.class.getName())
                .log(System.Logger.Level.WARNING, "destroying " + mc + " failed", e);
        }
    }
}
