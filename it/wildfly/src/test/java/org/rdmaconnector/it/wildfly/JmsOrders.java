package org.rdmaconnector.it.wildfly;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import org.jboss.ejb3.annotation.DeliveryActive;

/**
 * A JMS MDB beside {@link Echo} in one application: the README's per-name binding leaves it to the server's default
 * messaging adapter, where an {@code <ejb-name>*</ejb-name>} binding would hand it to rdma-connector.rar (which then
 * refuses it when the bean is created: WFLYEJB0383, no message listener of type jakarta.jms.MessageListener).
 * Delivery is off: an active JMS endpoint makes Artemis start threads while the deployment is created, and those
 * outlive it holding its class loader, through its Dependencies the rar's (measured: one rar class loader kept per
 * deployment), which WildFlyIT's redeploy check would then count.
 */
@DeliveryActive(false)
@MessageDriven(activationConfig = {
    @ActivationConfigProperty(propertyName = "destinationLookup", propertyValue = "java:/jms/queue/ExpiryQueue"),
    @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue")})
public class JmsOrders implements MessageListener {
    @Override
    public void onMessage(Message message) {
        // nothing: the test only checks where the bean is bound
    }
}
