package org.rdmaconnector.example;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import org.rdmaconnector.connector.CompletionListener;
import org.rdmaconnector.connector.MessageCompletion;

/**
 * The echo service: every message received on a connection the listener accepted is sent back, byte for byte, on the
 * same connection. Any RDMA CM client that posts a receive and sends a message gets its bytes back (rdma-core's
 * {@code rdma_client -s ADDRESS} does exactly that). It touches no transactional resource, so it runs without a JTA
 * transaction ({@code NOT_SUPPORTED}): the container's default, {@code REQUIRED}, would begin and commit one around
 * every message, which halved this MDB's throughput (BENCHMARKS.md). It need not see its echoes complete, so it
 * sends them unsignaled: the MDB is given each message and not also each echo's send completion, one delivery per
 * message instead of two (a failed echo still makes a completion, and ends the connection).
 */
@MessageDriven(messageListenerInterface = CompletionListener.class, activationConfig = {
    @ActivationConfigProperty(propertyName = "address", propertyValue = "0.0.0.0"),
    @ActivationConfigProperty(propertyName = "port", propertyValue = "7471"),
    @ActivationConfigProperty(propertyName = "receiveBufferCount", propertyValue = "64"),
    @ActivationConfigProperty(propertyName = "receiveBufferSize", propertyValue = "4096")})
@TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
public class EchoService implements CompletionListener {
    @Override
    public void onCompletion(MessageCompletion completion) {
        if (completion.isReceive() && completion.isSuccess()) {
            completion.connection().send(completion.data(), false);
        }
    }
}
