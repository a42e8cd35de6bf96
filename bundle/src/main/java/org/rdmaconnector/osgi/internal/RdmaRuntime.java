package org.rdmaconnector.osgi.internal;

import java.lang.System.Logger.Level;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.rdmaconnector.connector.spi.ConnectorRuntime;
import org.rdmaconnector.connector.spi.DeviceRegistry;
import org.rdmaconnector.connector.spi.ListenerHub;
import org.rdmaconnector.connector.spi.Scheduler;
import org.rdmaconnector.verbs.engine.EventEngine;

/**
 * The bundle's one {@link ConnectorRuntime} (event engine with its loop thread and a small delivery pool, device
 * registry, listener hub, timer), shared by the factories, the whiteboard and the shell commands.
 */
@Component(service = RdmaRuntime.class)
public class RdmaRuntime {
    private static final System.Logger LOG = System.getLogger(RdmaRuntime.class.getName());

    private ConnectorRuntime runtime;

    @Activate
    void activate() {
        runtime = ConnectorRuntime.standalone("rdma", 4);
        LOG.log(Level.INFO, "RDMA runtime started");
    }

    @Deactivate
    void deactivate() {
        runtime.close();
        LOG.log(Level.INFO, "RDMA runtime stopped");
    }

    /** The engine (its registrations are the open channels). */
    public EventEngine engine() {
        return runtime.engine();
    }

    DeviceRegistry devices() {
        return runtime.devices();
    }

    /** The listener hub (its activations are the listeners). */
    public ListenerHub hub() {
        return runtime.hub();
    }

    Scheduler scheduler() {
        return runtime.scheduler();
    }
}
