package org.rdmaconnector.it.wildfly;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import org.jboss.ejb3.annotation.ResourceAdapter;
import org.rdmaconnector.connector.CmEventListener;
import org.rdmaconnector.connector.ConnectionEvent;

/**
 * An MDB that names its adapter itself ({@code @ResourceAdapter}, the README's alternative to a binding in
 * {@code jboss-ejb3.xml}), deployed by {@link WildFlyPerEnvironmentIT} beside {@link Echo} and {@link JmsOrders}.
 */
@ResourceAdapter("rdma-connector.rar")
@MessageDriven(messageListenerInterface = CmEventListener.class, activationConfig = {
    @ActivationConfigProperty(propertyName = "address", propertyValue = "10.0.0.8"),
    @ActivationConfigProperty(propertyName = "port", propertyValue = "7491")})
public class CmEventsBoundByAnnotation implements CmEventListener {
    @Override
    public void onCmEvent(ConnectionEvent event) {
        // nothing: the test only checks where the bean is bound and listens
    }
}
