package org.rdmaconnector.it.app;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.EJB;
import jakarta.ejb.MessageDriven;
import org.rdmaconnector.connector.CmEventListener;
import org.rdmaconnector.connector.ConnectionEvent;

/** Records the CM events of the connections of the listener on 10.0.0.1:7471. */
@MessageDriven(messageListenerInterface = CmEventListener.class, activationConfig = {
    @ActivationConfigProperty(propertyName = "address", propertyValue = "10.0.0.1"),
    @ActivationConfigProperty(propertyName = "port", propertyValue = "7471"),
    @ActivationConfigProperty(propertyName = "receiveBufferCount", propertyValue = "32"),
    @ActivationConfigProperty(propertyName = "receiveBufferSize", propertyValue = "1024")})
public class CmEvents implements CmEventListener {
    @EJB
    private Recorder recorder;

    @Override
    public void onCmEvent(ConnectionEvent event) {
        recorder.cmEvent(event.connection(), event.type().name());
    }
}
