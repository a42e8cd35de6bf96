package org.rdmaconnector.it.wildfly;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import org.rdmaconnector.connector.CompletionListener;
import org.rdmaconnector.connector.MessageCompletion;

/**
 * The README's echo MDB, deployed by {@link WildFlyPerEnvironmentIT} with the README's {@code jboss-ejb3.xml}: its
 * address and port there come from system properties and replace the annotation's values.
 */
@MessageDriven(messageListenerInterface = CompletionListener.class, activationConfig = {
    @ActivationConfigProperty(propertyName = "address", propertyValue = "10.0.0.1"),
    @ActivationConfigProperty(propertyName = "port", propertyValue = "7471")})
public class Echo implements CompletionListener {
    @Override
    public void onCompletion(MessageCompletion completion) {
        if (completion.isReceive()) {
            completion.connection().send(completion.data());
        }
    }
}
