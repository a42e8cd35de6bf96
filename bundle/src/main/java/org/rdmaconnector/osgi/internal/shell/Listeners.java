package org.rdmaconnector.osgi.internal.shell;

import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.osgi.internal.RdmaRuntime;

/** {@code rdma:listeners}: each whiteboard listener service's activation: address, state and counters. */
@Service
@Command(scope = "rdma", name = "listeners", description = "Lists the RDMA listeners of whiteboard services")
public class Listeners implements Action {
    @Reference
    private RdmaRuntime runtime;

    @Override
    public Object execute() {
        var activations = runtime.hub().activations();
        if (activations.isEmpty()) {
            System.out.println("no listener is active");
        }
        for (Activation a : activations) {
            System.out.println(a.settings().address() + ":" + a.settings().port() + " " + a.state() + " " + a.name()
                + " delivered " + a.delivered() + " errors " + a.errors() + " connections " + a.connectionCount()
                + " (" + a.stateDetail() + ")");
        }
        return null;
    }
}
