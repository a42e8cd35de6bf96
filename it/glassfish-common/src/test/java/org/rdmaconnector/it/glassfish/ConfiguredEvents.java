package org.rdmaconnector.it.glassfish;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import org.rdmaconnector.connector.CmEventListener;
import org.rdmaconnector.connector.ConnectionEvent;

/**
 * An MDB whose listener comes from the server's environment, as the README's GlassFish/Payara section shows: the
 * address from the environment variable RDMA_ADDRESS, the port from the system property rdma.port. Deployed by
 * {@link GlassFishIT} in a war of its own; it receives nothing (no device).
 */
@MessageDriven(messageListenerInterface = CmEventListener.class, activationConfig = {
    @ActivationConfigProperty(propertyName = "address", propertyValue = "${ENV=RDMA_ADDRESS}"),
    @ActivationConfigProperty(propertyName = "port", propertyValue = "${rdma.port}")})
public class ConfiguredEvents implements CmEventListener {
    @Override
    public void onCmEvent(ConnectionEvent event) {
        // the test only looks at the activation
    }
}
