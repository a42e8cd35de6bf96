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

    @Override
    public RdmaConnection getConnection() throws ResourceException {
        return (RdmaConnection) manager.allocateConnection(mcf, null);
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
