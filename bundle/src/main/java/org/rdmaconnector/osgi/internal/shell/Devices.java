package org.rdmaconnector.osgi.internal.shell;

import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;
import org.rdmaconnector.verbs.Device;

/** {@code rdma:devices}: the RDMA devices libibverbs lists (name, node GUID, kernel index), or why there are none. */
@Service
@Command(scope = "rdma", name = "devices", description = "Lists the RDMA devices")
public class Devices extends TableCommand {
    @Override
    ShellTable table() {
        DeviceListing listing = DeviceListing.read();
        if (listing.whyNone() != null) {
            explain(listing.whyNone());
            return null;
        }
        ShellTable table = new ShellTable();
        table.column("Name");
        table.column("GUID");
        table.column("Index").alignRight();
        for (Device device : listing.devices()) {
            table.addRow().addContent(device.name(), String.format("%016x", device.guid()), device.index());
        }
        return table;
    }
}
