package org.rdmaconnector.osgi.internal.shell;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.osgi.internal.RdmaRuntime;

/**
 * {@code rdma:listeners [address]}: each whiteboard listener service's activation, or those on one address: address,
 * port, state, endpoint, counters, and what it waits for.
 */
@Service
@Command(scope = "rdma", name = "listeners", description = "Lists the RDMA listeners of whiteboard services")
public class Listeners extends TableCommand {
    @Reference
    private RdmaRuntime runtime;

    @Argument(name = "address", description = "Only the listeners on this address (rdma.address, as configured)")
    @Completion(ListenerAddressCompleter.class)
    String address;

    @Override
    ShellTable table() {
        ShellTable table = new ShellTable()
            .emptyTableText(address == null ? "no listener is active" : "no listener is active on " + address);
        table.column("Address");
        table.column("Port").alignRight();
        table.column("State");
        table.column("Endpoint");
        table.column("Delivered").alignRight();
        table.column("Errors").alignRight();
        table.column("Connections").alignRight();
        table.column("Detail");
        for (Activation a : runtime.hub().activations()) {
            if (address == null || address.equals(a.settings().address())) {
                table.addRow().addContent(a.settings().address(), a.settings().port(), a.state(), a.name(),
                    a.delivered(), a.errors(), a.connectionCount(), a.stateDetail());
            }
        }
        return table;
    }
}
