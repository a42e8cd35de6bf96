package org.rdmaconnector.osgi.internal.shell;

import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;
import org.rdmaconnector.osgi.internal.RdmaRuntime;

/** Completes a listener address from the listeners running now (the whiteboard services' {@code rdma.address}). */
@Service
public class ListenerAddressCompleter implements Completer {
    @Reference
    private RdmaRuntime runtime;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        List<String> addresses = runtime.hub().activations().stream().map(a -> a.settings().address())
            .distinct().sorted().toList();
        return new StringsCompleter(addresses).complete(session, commandLine, candidates);
    }
}
