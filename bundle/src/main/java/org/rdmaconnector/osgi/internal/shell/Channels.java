package org.rdmaconnector.osgi.internal.shell;

import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.rdmaconnector.osgi.internal.RdmaRuntime;
import org.rdmaconnector.verbs.engine.Registration;

/**
 * {@code rdma:channels}: each channel the engine reads (CM event channels, completion channels, async fds) with its
 * counters. Events are acknowledged as they are read (CQ events in batches, all by the time the channel closes).
 */
@Service
@Command(scope = "rdma", name = "channels", description = "Lists the open RDMA channels with their counters")
public class Channels implements Action {
    @Reference
    private RdmaRuntime runtime;

    @Override
    public Object execute() {
        var registrations = runtime.engine().registrations();
        if (registrations.isEmpty()) {
            System.out.println("no channel is open");
        }
        for (Registration r : registrations) {
            System.out.println(r.name() + " read " + r.eventsRead() + " acked " + r.eventsRead() + " delivered "
                + r.eventsDelivered() + " errors " + r.errors() + " in-flight " + r.inFlight()
                + (r.isPaused() ? " paused" : ""));
        }
        return null;
    }
}
