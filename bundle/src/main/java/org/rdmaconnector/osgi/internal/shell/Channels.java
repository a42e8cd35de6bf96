package org.rdmaconnector.osgi.internal.shell;

import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.rdmaconnector.osgi.internal.RdmaRuntime;
import org.rdmaconnector.verbs.engine.Registration;

/**
 * {@code rdma:channels}: each channel the engine reads (CM event channels, completion channels, async fds) with its
 * counters: events read (a completion channel's are work completions), kernel events acknowledged (a completion
 * channel's CQ events, in batches), delivered, errors, in flight.
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
            System.out.println(r.name() + " read " + r.eventsRead() + " acked " + r.eventsAcked() + " delivered "
                + r.eventsDelivered() + " errors " + r.errors() + " in-flight " + r.inFlight()
                + (r.isPaused() ? " paused" : ""));
        }
        return null;
    }
}
