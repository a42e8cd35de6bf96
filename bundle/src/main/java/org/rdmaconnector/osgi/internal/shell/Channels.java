package org.rdmaconnector.osgi.internal.shell;

import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;
import org.rdmaconnector.osgi.internal.RdmaRuntime;
import org.rdmaconnector.verbs.engine.Registration;

/**
 * {@code rdma:channels}: each channel the engine reads (CM event channels, completion channels, async fds) with its
 * counters: events read (a completion channel's are work completions), kernel events acknowledged (a completion
 * channel's CQ events, in batches), delivered, errors, in flight, and whether it is paused (events in flight at their
 * bound: the fd is not read).
 */
@Service
@Command(scope = "rdma", name = "channels", description = "Lists the open RDMA channels with their counters")
public class Channels extends TableCommand {
    @Reference
    private RdmaRuntime runtime;

    @Override
    ShellTable table() {
        ShellTable table = new ShellTable().emptyTableText("no channel is open");
        table.column("Channel");
        table.column("Read").alignRight();
        table.column("Acked").alignRight();
        table.column("Delivered").alignRight();
        table.column("Errors").alignRight();
        table.column("In flight").alignRight();
        table.column("Paused");
        for (Registration r : runtime.engine().registrations()) {
            table.addRow().addContent(r.name(), r.eventsRead(), r.eventsAcked(), r.eventsDelivered(), r.errors(),
                r.inFlight(), r.isPaused() ? "paused" : "");
        }
        return table;
    }
}
