package org.rdmaconnector.verbs.device;

import org.rdmaconnector.connector.spi.ConnectorRuntime;
import org.rdmaconnector.connector.spi.DeviceRegistry;
import org.rdmaconnector.connector.spi.ListenerHub;
import org.rdmaconnector.verbs.engine.EventEngine;

/** The connector machinery for device tests: the production {@link ConnectorRuntime}, closed in its one order. */
final class ConnectorStack implements AutoCloseable {
    final ConnectorRuntime runtime = ConnectorRuntime.standalone("rdma-test", 4);
    final EventEngine engine = runtime.engine();
    final DeviceRegistry devices = runtime.devices();
    final ListenerHub hub = runtime.hub();

    @Override
    public void close() {
        runtime.close();
    }
}
