package org.rdmaconnector.ra;

import jakarta.resource.ResourceException;
import jakarta.resource.spi.ConnectionManager;
import javax.naming.Reference;
import org.rdmaconnector.connector.RdmaConnection;

/** The factory bound in JNDI: asks the server's connection manager for a handle. */
public final class RdmaConnectionFactoryImpl implements RdmaConnectionFactory {
    private static final long serialVersionUID = 1L;

    private final transient RdmaManagedConnectionFactory mcf;
    private final transient ConnectionManager manager;
    private Reference reference;

    RdmaConnectionFactoryImpl(RdmaManagedConnectionFactory mcf, ConnectionManager manager) {
        this.mcf = mcf;
        this.manager = manager;
    }

    /** Throws the adapter's own {@link RdmaResourceException} where the server's pool wrapped it. */
    @Override
    public RdmaConnection getConnection() throws ResourceException {
        try {
            return (RdmaConnection) manager.allocateConnection(mcf, null);
        } catch (ResourceException e) {
            for (Throwable cause = e; cause != null; cause = cause.getCause()) {
                if (cause instanceof RdmaResourceException ours) {
                    if (ours != e) {
                        ours.addSuppressed(e);
                    }
                    throw ours;
                }
            }
            throw e;
        }
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
