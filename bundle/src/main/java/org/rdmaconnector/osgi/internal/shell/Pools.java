package org.rdmaconnector.osgi.internal.shell;

import java.util.Arrays;
import java.util.Comparator;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.Pool;
import org.rdmaconnector.osgi.internal.PooledConnectionFactory;

/**
 * {@code rdma:pools}: each pooled connection factory (one per factory configuration) by its configuration PID: device
 * and port, pool sizes, what it holds and has done (idle, borrowed, borrowers that waited, borrowers that timed out),
 * and whether its device is there.
 */
@Service
@Command(scope = "rdma", name = "pools", description = "Lists the pooled RDMA connection factories with their counters")
public class Pools extends TableCommand {
    /** The factories are found by their component, not by the service interface they are registered under. */
    private static final String FACTORIES = "(component.name=" + PooledConnectionFactory.class.getName() + ")";

    @Reference
    private BundleContext bundleContext;

    @Override
    ShellTable table() throws Exception {
        ShellTable table = new ShellTable().emptyTableText("no pooled connection factory is configured "
            + "(one comes from each factory configuration of org.rdmaconnector.connection)");
        table.column("PID");
        table.column("Device");
        table.column("Port").alignRight();
        table.column("Min").alignRight();
        table.column("Max").alignRight();
        table.column("Idle").alignRight();
        table.column("Borrowed").alignRight();
        table.column("Waits").alignRight();
        table.column("Timeouts").alignRight();
        table.column("Status");
        ServiceReference<?>[] references = bundleContext.getServiceReferences((String) null, FACTORIES);
        if (references == null) {
            return table;
        }
        Arrays.sort(references, Comparator.comparing(Pools::pid));
        for (ServiceReference<?> reference : references) {
            Object service = bundleContext.getService(reference);
            try {
                if (service instanceof PooledConnectionFactory factory) {
                    ChannelSettings channels = factory.channelSettings();
                    Pool.Settings sizes = factory.poolSettings();
                    Pool.Counters counters = factory.counters();
                    String missing = factory.missingDevice();
                    table.addRow().addContent(pid(reference),
                        channels.deviceName() == null ? "(first ACTIVE)" : channels.deviceName(),
                        channels.portNumber(), sizes.minSize(), sizes.maxSize(), counters.idle(), counters.borrowed(),
                        counters.waits(), counters.timeouts(), missing == null ? "device present" : "waiting: " + missing);
                }
            } finally {
                if (service != null) {
                    bundleContext.ungetService(reference);
                }
            }
        }
        return table;
    }

    private static String pid(ServiceReference<?> reference) {
        return String.valueOf(reference.getProperty(Constants.SERVICE_PID));
    }
}
