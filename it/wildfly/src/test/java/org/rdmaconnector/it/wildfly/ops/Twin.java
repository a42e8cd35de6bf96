package org.rdmaconnector.it.wildfly.ops;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import org.rdmaconnector.connector.CompletionListener;
import org.rdmaconnector.connector.MessageCompletion;

/** Deployed in two applications: the same endpoint on the same listener twice. */
@MessageDriven(messageListenerInterface = CompletionListener.class, activationConfig = {
    @ActivationConfigProperty(propertyName = "address", propertyValue = "10.0.0.1"),
    @ActivationConfigProperty(propertyName = "port", propertyValue = "7483")})
public class Twin implements CompletionListener {
    @Override
    public void onCompletion(MessageCompletion completion) {
    }
}
