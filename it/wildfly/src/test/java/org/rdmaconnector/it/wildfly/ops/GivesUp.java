package org.rdmaconnector.it.wildfly.ops;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import org.rdmaconnector.connector.CmEventListener;
import org.rdmaconnector.connector.ConnectionEvent;

/** Sets no setup retry of its own: it takes the adapter's (OperationsIT's rar: 3 tries from 100 ms). */
@MessageDriven(messageListenerInterface = CmEventListener.class, activationConfig = {
    @ActivationConfigProperty(propertyName = "address", propertyValue = "10.0.0.1"),
    @ActivationConfigProperty(propertyName = "port", propertyValue = "7482")})
public class GivesUp implements CmEventListener {
    @Override
    public void onCmEvent(ConnectionEvent event) {
    }
}
