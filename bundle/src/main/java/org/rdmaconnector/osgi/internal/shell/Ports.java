package org.rdmaconnector.osgi.internal.shell;

import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.rdmaconnector.connector.PortAttributes;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.Device;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.Rdma;

/** {@code rdma:ports}: each device's ports with their state, MTU and link layer. */
@Service
@Command(scope = "rdma", name = "ports", description = "Lists the ports of the RDMA devices")
public class Ports implements Action {
    private static final String[] STATES = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};

    @Override
    public Object execute() {
        try {
            for (Device device : Rdma.devices()) {
                try (DeviceContext context = DeviceContext.openVerbsOnly(device.name())) {
                    for (int port = 1; port <= context.query().physicalPortCount(); port++) {
                        PortAttributes a = context.queryPort(port);
                        System.out.println(device.name() + " port " + port + " " + state(a.state()) + " mtu "
                            + a.activeMtuBytes() + " " + (a.isEthernet() ? "Ethernet (RoCE)" : "InfiniBand"));
                    }
                } catch (RdmaException e) {
                    System.out.println(device.name() + ": " + e.getMessage());
                }
            }
        } catch (RdmaException | LinkageError e) {
            System.out.println("no RDMA devices: " + e.getMessage());
        }
        return null;
    }

    private static String state(int state) {
        return state >= 0 && state < STATES.length ? STATES[state] : String.valueOf(state);
    }
}
