package org.rdmaconnector.example;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import java.lang.System.Logger.Level;
import org.rdmaconnector.connector.CmEventListener;
import org.rdmaconnector.connector.ConnectionEvent;

/**
 * Logs the echo service's CM events: who connects, when the connection is up, and when it goes. No transaction per
 * event ({@code NOT_SUPPORTED}), as for the {@link EchoService}.
 */
@MessageDriven(messageListenerInterface = CmEventListener.class, activationConfig = {
    @ActivationConfigProperty(propertyName = "address", propertyValue = "0.0.0.0"),
    @ActivationConfigProperty(propertyName = "port", propertyValue = "7471"),
    @ActivationConfigProperty(propertyName = "receiveBufferCount", propertyValue = "64"),
    @ActivationConfigProperty(propertyName = "receiveBufferSize", propertyValue = "4096")})
@TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
public class ConnectionLog implements CmEventListener {
    private static final System.Logger LOG = System.getLogger(ConnectionLog.class.getName());

    @Override
    public void onCmEvent(ConnectionEvent event) {
        LOG.log(Level.INFO, "echo service: " + event.type() + " connection " + event.connection().number()
            + " peer " + event.connection().peerAddress() + (event.status() == 0 ? "" : " status " + event.status()));
    }
}
