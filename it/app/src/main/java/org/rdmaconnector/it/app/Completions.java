package org.rdmaconnector.it.app;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.EJB;
import jakarta.ejb.MessageDriven;
import org.rdmaconnector.connector.CompletionListener;
import org.rdmaconnector.connector.InboundConnection;
import org.rdmaconnector.connector.MessageCompletion;

/**
 * Records the messages received on the connections of the listener on 10.0.0.1:7471 and echoes each one back on its
 * connection (so rdma-core's {@code rdma_client} and echo-checking clients get their answers); records the echoes'
 * completions and every failure.
 */
@MessageDriven(messageListenerInterface = CompletionListener.class, activationConfig = {
    @ActivationConfigProperty(propertyName = "address", propertyValue = "10.0.0.1"),
    @ActivationConfigProperty(propertyName = "port", propertyValue = "7471"),
    @ActivationConfigProperty(propertyName = "receiveBufferCount", propertyValue = "32"),
    @ActivationConfigProperty(propertyName = "receiveBufferSize", propertyValue = "1024"),
    @ActivationConfigProperty(propertyName = "maxConcurrentDeliveries", propertyValue = "4")})
public class Completions implements CompletionListener {
    @EJB
    private Recorder recorder;

    @Override
    public void onCompletion(MessageCompletion completion) {
        InboundConnection connection = completion.connection();
        if (!completion.isSuccess()) {
            recorder.failed(connection, (completion.isReceive() ? "receive: " : "echo: ")
                + completion.workCompletion().statusText());
        } else if (!completion.isReceive()) {
            recorder.echoed(connection);
        } else {
            byte[] data = completion.data();
            recorder.received(connection, completion.sequence(), data);
            try {
                connection.send(data);
            } catch (RuntimeException e) {
                // not thrown on: a redelivery would record the message twice
                recorder.failed(connection, "echo: " + e);
            }
        }
    }
}
