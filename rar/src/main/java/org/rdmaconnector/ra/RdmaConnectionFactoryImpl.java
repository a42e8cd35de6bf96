package org.rdmaconnector.ra;

import jakarta.resource.Referenceable;
import jakarta.resource.ResourceException;
import jakarta.resource.spi.ConnectionManager;
import java.io.Serializable;
import javax.naming.Reference;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaConnectionFactory;
import org.rdmaconnector.connector.RdmaException;

/**
 * The factory bound in JNDI: asks the server's connection manager for a handle, and answers with the contract of
 * {@link RdmaConnectionFactory}, the same as in OSGi: the adapter's {@link RdmaException} where the server's pool
 * wrapped it, an {@link IllegalStateException} for the rest (the server's exception as the cause).
 */
public final class RdmaConnectionFactoryImpl implements RdmaConnectionFactory, Serializable, Referenceable {
    private static final long serialVersionUID = 1L;

    private final transient RdmaManagedConnectionFactory mcf;
    private final transient ConnectionManager manager;
    private Reference reference;

    RdmaConnectionFactoryImpl(RdmaManagedConnectionFactory mcf, ConnectionManager manager) {
        this.mcf = mcf;
        this.manager = manager;
    }

    @Override
    public RdmaConnection getConnection() {
        try {
            return (RdmaConnection) manager.allocateConnection(mcf, null);
        } catch (ResourceException e) {
            for (Throwable cause = e; cause != null; cause = cause.getCause()) {
                if (cause instanceof RdmaException rdma) {
                    rdma.addSuppressed(e);
                    throw rdma;
                }
            }
            throw new IllegalStateException("no RDMA connection from " + this + ": " + ours(e).getMessage(), e);
        }
    }

    /** The adapter's own exception in what the server threw (its pool wraps it), or what it threw. */
    private static ResourceException ours(ResourceException e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof RdmaResourceException adapter) {
                return adapter;
            }
        }
        return e;
    }

    @Override
    public void setReference(Reference reference) {
        this.reference = reference;
    }

    @Override
    public Reference getReference() {
        return reference;
    }

    @Override
    public String toString() {
        return "RdmaConnectionFactory[" + mcf.settings().deviceDescription() + "]";
    }
}
