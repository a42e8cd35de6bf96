package org.rdmaconnector.osgi.internal.shell;

import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;
import org.rdmaconnector.verbs.Device;

/** Completes an RDMA device name from the devices libibverbs lists now (none where the list cannot be read). */
@Service
public class DeviceNameCompleter implements Completer {
    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        List<String> names = DeviceListing.read().devices().stream().map(Device::name).toList();
        return new StringsCompleter(names).complete(session, commandLine, candidates);
    }
}
