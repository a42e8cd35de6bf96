package org.rdmaconnector.osgi.internal.shell;

import java.util.List;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.Device;
import org.rdmaconnector.verbs.Rdma;

/**
 * The RDMA devices libibverbs lists, or why there are none: the list cannot be read (no RDMA in the kernel, rdma-core
 * missing) or it is empty.
 *
 * @param devices the devices, in libibverbs' order; empty when {@code whyNone} is set
 * @param whyNone null when there are devices, else one sentence for people
 */
record DeviceListing(List<Device> devices, String whyNone) {
    static final String NO_DEVICE = "no RDMA device is present on this machine";

    static DeviceListing read() {
        try {
            List<Device> devices = Rdma.devices();
            return new DeviceListing(devices, devices.isEmpty() ? NO_DEVICE : null);
        } catch (RdmaException | LinkageError e) {
            return new DeviceListing(List.of(), "no RDMA devices: " + e.getMessage());
        }
    }
}
