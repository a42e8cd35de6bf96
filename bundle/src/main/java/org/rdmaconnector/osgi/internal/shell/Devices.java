package org.rdmaconnector.osgi.internal.shell;

import java.util.List;
import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.Device;
import org.rdmaconnector.verbs.Rdma;

/** {@code rdma:devices}: the RDMA devices libibverbs lists, or why there are none. */
@Service
@Command(scope = "rdma", name = "devices", description = "Lists the RDMA devices")
public class Devices implements Action {
    @Override
    public Object execute() {
        try {
            List<Device> devices = Rdma.devices();
            if (devices.isEmpty()) {
                System.out.println("no RDMA device is present on this machine");
            }
            for (Device device : devices) {
                System.out.println(device);
            }
        } catch (RdmaException | LinkageError e) {
            System.out.println("no RDMA devices: " + e.getMessage());
        }
        return null;
    }
}
