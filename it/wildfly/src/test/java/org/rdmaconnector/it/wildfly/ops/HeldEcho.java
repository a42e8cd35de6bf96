package org.rdmaconnector.it.wildfly.ops;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import org.rdmaconnector.connector.CompletionListener;
import org.rdmaconnector.connector.MessageCompletion;

/**
 * Starts paused (deliveryActive=false) and sets its own setup retry, which wins over the adapter's: it retries for
 * ever, from 2 s.
 */
@MessageDriven(messageListenerInterface = CompletionListener.class, activationConfig = {
    @ActivationConfigProperty(propertyName = "address", propertyValue = "10.0.0.1"),
    @ActivationConfigProperty(propertyName = "port", propertyValue = "7481"),
    @ActivationConfigProperty(propertyName = "deliveryActive", propertyValue = "false"),
    @ActivationConfigProperty(propertyName = "setupIntervalMillis", propertyValue = "2000"),
    @ActivationConfigProperty(propertyName = "setupMaxIntervalMillis", propertyValue = "30000"),
    @ActivationConfigProperty(propertyName = "setupAttempts", propertyValue = "0")})
public class HeldEcho implements CompletionListener {
    @Override
    public void onCompletion(MessageCompletion completion) {
        if (completion.isReceive()) {
            completion.connection().send(completion.data());
        }
    }
}
