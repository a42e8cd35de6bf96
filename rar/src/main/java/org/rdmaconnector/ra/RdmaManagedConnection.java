package org.rdmaconnector.ra;

import jakarta.resource.NotSupportedException;
import jakarta.resource.ResourceException;
import jakarta.resource.spi.ConnectionEvent;
import jakarta.resource.spi.ConnectionEventListener;
import jakarta.resource.spi.ConnectionRequestInfo;
import jakarta.resource.spi.LocalTransaction;
import jakarta.resource.spi.ManagedConnection;
import jakarta.resource.spi.ManagedConnectionMetaData;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.security.auth.Subject;
import javax.transaction.xa.XAResource;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ConnectionHandle;
import org.rdmaconnector.verbs.AsyncEvent;

/**
 * A pooled channel set: the server keeps it between uses. {@link #cleanup()} hands the next user a clean set (its
 * endpoints and regions closed, old handles invalid); {@link #destroy()} frees it. A fatal async event of its device
 * or port raises CONNECTION_ERROR_OCCURRED so the server evicts it. Not transactional.
 */
public final class RdmaManagedConnection implements ManagedConnection {
    private static final System.Logger LOG = System.getLogger(RdmaManagedConnection.class.getName());

    private final RdmaManagedConnectionFactory factory;
    private final ChannelSet set;
    private final List<ConnectionHandle> handles = new CopyOnWriteArrayList<>();
    private final List<ConnectionEventListener> listeners = new CopyOnWriteArrayList<>();
    private PrintWriter logWriter;

    RdmaManagedConnection(RdmaManagedConnectionFactory factory, ChannelSet set) {
        this.factory = factory;
        this.set = set;
        // the server destroys the connection from its listener: not on the thread that delivers async events
        set.onFatalEvent(event -> {
            try {
                factory.adapter().later(() -> fatal(event));
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // not lost: the set keeps the event, so the pool's validation (getInvalidConnections) drops it
                LOG.log(System.Logger.Level.WARNING, "RDMA " + event.type() + " on " + event.device() + " could not "
                    + "be reported to the container now (" + e.getMessage() + "); " + this + " is invalid from now "
                    + "on and the pool drops it when it validates");
            }
        });
    }

    RdmaManagedConnectionFactory factory() {
        return factory;
    }

    /** Whether its set may be lent again ({@link org.rdmaconnector.connector.spi.ChannelSet#isHealthy}). */
    boolean isHealthy() {
        return set.isHealthy();
    }

    /** The channel set (for tests and diagnostics). */
    ChannelSet channelSet() {
        return set;
    }

    @Override
    public Object getConnection(Subject subject, ConnectionRequestInfo info) throws ResourceException {
        if (set.isClosed()) {
            throw new RdmaResourceException("this RDMA managed connection is destroyed", null, null);
        }
        ConnectionHandle handle = new ConnectionHandle(set, this::closed);
        handles.add(handle);
        return handle;
    }

    private void closed(ConnectionHandle handle) {
        handles.remove(handle);
        ConnectionEvent event = new ConnectionEvent(this, ConnectionEvent.CONNECTION_CLOSED);
        event.setConnectionHandle(handle);
        for (ConnectionEventListener listener : listeners) {
            listener.connectionClosed(event);
        }
    }

    private void fatal(AsyncEvent asyncEvent) {
        ResourceException cause = new ResourceException("RDMA " + asyncEvent.type() + " on " + asyncEvent.device()
            + " port " + asyncEvent.portNumber() + ": " + asyncEvent.description(), asyncEvent.type().name());
        LOG.log(System.Logger.Level.WARNING, cause.getMessage() + "; the pool drops " + this);
        ConnectionEvent event = new ConnectionEvent(this, ConnectionEvent.CONNECTION_ERROR_OCCURRED, cause);
        for (ConnectionEventListener listener : listeners) {
            listener.connectionErrorOccurred(event);
        }
    }

    @Override
    public void associateConnection(Object connection) throws ResourceException {
        if (!(connection instanceof ConnectionHandle handle)) {
            throw new ResourceException("not an RDMA connection handle: " + connection);
        }
        try {
            handle.moveTo(set, this::closed);
        } catch (IllegalStateException e) {
            throw new ResourceException(e.getMessage(), e);
        }
        handles.add(handle);
    }

    @Override
    public void cleanup() {
        for (ConnectionHandle handle : handles) {
            if (handle.channelSet() == set) { // a handle moved to another connection is that one's now
                handle.invalidate();
            }
        }
        handles.clear();
        set.cleanup();
    }

    @Override
    public void destroy() {
        cleanup();
        set.close();
    }

    @Override
    public void addConnectionEventListener(ConnectionEventListener listener) {
        listeners.add(listener);
    }

    @Override
    public void removeConnectionEventListener(ConnectionEventListener listener) {
        listeners.remove(listener);
    }

    @Override
    public XAResource getXAResource() throws ResourceException {
        throw new NotSupportedException("RDMA connections do not take part in transactions");
    }

    @Override
    public LocalTransaction getLocalTransaction() throws ResourceException {
        throw new NotSupportedException("RDMA connections do not take part in transactions");
    }

    @Override
    public ManagedConnectionMetaData getMetaData() {
        return new ManagedConnectionMetaData() {
            @Override
            public String getEISProductName() {
                return "RDMA (rdma-core verbs and RDMA CM), device " + set.deviceName();
            }

            @Override
            public String getEISProductVersion() {
                return set.context().query().firmwareVersion();
            }

            @Override
            public int getMaxConnections() {
                return 0;
            }

            @Override
            public String getUserName() {
                return null;
            }
        };
    }

    @Override
    public void setLogWriter(PrintWriter out) {
        this.logWriter = out;
    }

    @Override
    public PrintWriter getLogWriter() {
        return logWriter;
    }

    @Override
    public String toString() {
        return "RdmaManagedConnection[" + set + "]";
    }
}
