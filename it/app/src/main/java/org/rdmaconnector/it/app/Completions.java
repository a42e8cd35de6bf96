package org.rdmaconnector.it.app;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.EJB;
import jakarta.ejb.MessageDriven;
import java.nio.charset.StandardCharsets;
import org.rdmaconnector.connector.CompletionListener;
import org.rdmaconnector.connector.MessageCompletion;

/** Records the messages received on the connections of the listener on 10.0.0.1:7471, and send completions. */
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
        if (completion.isReceive()) {
            recorder.received(completion.sequence(), new String(completion.data(), StandardCharsets.UTF_8));
        } else {
            recorder.sent();
        }
    }
}
