package org.rdmaconnector.osgi.internal.shell;

import java.util.List;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;
import org.rdmaconnector.connector.PortAttributes;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.Device;
import org.rdmaconnector.verbs.DeviceContext;

/** {@code rdma:ports [device]}: the ports of every device, or of one, with state, active MTU and link layer. */
@Service
@Command(scope = "rdma", name = "ports", description = "Lists the ports of the RDMA devices")
public class Ports extends TableCommand {
    private static final String[] STATES = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};

    @Argument(name = "device", description = "Only the ports of this device")
    @Completion(DeviceNameCompleter.class)
    String device;

    @Override
    ShellTable table() {
        DeviceListing listing = DeviceListing.read();
        if (listing.whyNone() != null) {
            explain(listing.whyNone());
            return null;
        }
        List<Device> devices = listing.devices().stream()
            .filter(d -> device == null || d.name().equals(device)).toList();
        if (devices.isEmpty()) {
            throw new IllegalArgumentException("no RDMA device named '" + device + "'; present: "
                + listing.devices().stream().map(Device::name).toList());
        }
        ShellTable table = new ShellTable();
        table.column("Device");
        table.column("Port").alignRight();
        table.column("State");
        table.column("MTU").alignRight();
        table.column("Link layer");
        for (Device d : devices) {
            try (DeviceContext context = DeviceContext.openVerbsOnly(d.name())) {
                for (int port = 1; port <= context.query().physicalPortCount(); port++) {
                    PortAttributes a = context.queryPort(port);
                    table.addRow().addContent(d.name(), port, state(a.state()), a.activeMtuBytes(),
                        a.isEthernet() ? "Ethernet (RoCE)" : "InfiniBand");
                }
            } catch (RdmaException e) {
                table.addRow().addContent(d.name(), "", "unreadable: " + e.getMessage(), "", "");
            }
        }
        return table;
    }

    private static String state(int state) {
        return state >= 0 && state < STATES.length ? STATES[state] : String.valueOf(state);
    }
}
