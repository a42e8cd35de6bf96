package org.rdmaconnector.example;

import jakarta.annotation.Resource;
import jakarta.ejb.Stateless;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaConnectionFactory;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkRequest;

/**
 * The client: takes a pooled connection from the injected factory, connects to an echo service, and for each message
 * posts a receive for the echo, sends, and waits for the echo: first without blocking
 * ({@code tryWaitForCompletion}), then blocking with a timeout.
 */
@Stateless
public class EchoClient {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Resource(name = "rdma/factory")
    private RdmaConnectionFactory factory;

    /** Sends {@code messages} messages of {@code size} bytes to the echo service at {@code service}. */
    public LatencyReport run(InetSocketAddress service, int messages, int size) throws Exception {
        if (messages < 1 || size < 1 || size > RdmaEndpoint.MAX_STAGED_MESSAGE) {
            throw new IllegalArgumentException("messages must be positive and size from 1 to "
                + RdmaEndpoint.MAX_STAGED_MESSAGE + " bytes");
        }
        long[] roundTrips = new long[messages];
        int intact = 0;
        int immediate = 0;
        try (RdmaConnection connection = factory.getConnection();
             RdmaEndpoint endpoint = connection.connect(service, TIMEOUT)) {
            long start = System.nanoTime();
            for (int i = 0; i < messages; i++) {
                byte[] message = message(i, size);
                long sent = System.nanoTime();
                WorkRequest echo = endpoint.receive();
                WorkRequest send = endpoint.send(message);
                if (echo.completion().tryWaitForCompletion()) {
                    immediate++;
                } else if (!echo.completion().waitForCompletion(TIMEOUT)) {
                    throw new IllegalStateException("no echo of message " + i + " within " + TIMEOUT);
                }
                roundTrips[i] = System.nanoTime() - sent;
                if (!send.completion().waitForCompletion(TIMEOUT) || !send.result().isSuccess()) {
                    throw new IllegalStateException("send " + i + " did not complete: " + send.result());
                }
                if (echo.result().isSuccess() && Arrays.equals(message, echo.data())) {
                    intact++;
                }
            }
            return new LatencyReport(messages, size, intact, immediate, roundTrips, System.nanoTime() - start);
        }
    }

    /** Message {@code i}: its number, then a repeating pattern, {@code size} bytes in all. */
    static byte[] message(int i, int size) {
        byte[] bytes = new byte[size];
        byte[] head = ("echo " + i + " ").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        for (int k = 0; k < size; k++) {
            bytes[k] = k < head.length ? head[k] : (byte) ('a' + (i + k) % 26);
        }
        return bytes;
    }
}
