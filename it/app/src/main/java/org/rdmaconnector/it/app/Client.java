package org.rdmaconnector.it.app;

import jakarta.annotation.Resource;
import jakarta.ejb.Stateless;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaConnectionFactory;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;

/** The outbound side: a pooled connection from the injected factory, K messages to the MDBs' listener. */
@Stateless
public class Client {
    static final InetSocketAddress LISTENER = new InetSocketAddress("10.0.0.1", 7471);
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Resource(name = "rdma/factory")
    private RdmaConnectionFactory factory;

    public RdmaConnectionFactory factory() {
        return factory;
    }

    /** What {@link #send} did: one report line per fact, and the endpoint's own address (the MDBs' peer). */
    public record Sent(List<String> report, InetSocketAddress local) {
    }

    /**
     * Connects, sends {@code k} messages, each with a receive posted for its echo, waits on each Completion and
     * compares each echo with its message.
     */
    public Sent send(int k) throws Exception {
        List<String> report = new ArrayList<>();
        try (RdmaConnection connection = factory.getConnection();
             RdmaEndpoint endpoint = connection.connect(LISTENER, TIMEOUT)) {
            report.add("device " + connection.deviceName());
            int completed = 0;
            int polled = 0;
            int echoed = 0;
            for (int i = 0; i < k; i++) {
                byte[] message = message(i).getBytes(StandardCharsets.UTF_8);
                WorkRequest echo = endpoint.receive();
                WorkRequest request = endpoint.send(message);
                if (request.completion().tryWaitForCompletion()) {
                    polled++; // done before we waited: the non-blocking path
                } else if (!request.completion().waitForCompletion(TIMEOUT)) {
                    report.add("send " + i + " timed out");
                    continue;
                }
                WorkCompletion wc = request.result();
                if (wc.isSuccess()) {
                    completed++;
                } else {
                    report.add("send " + i + " failed: " + wc.statusText());
                }
                WorkCompletion back = echo.await(TIMEOUT);
                if (back == null) {
                    report.add("echo " + i + " timed out");
                } else if (!back.isSuccess()) {
                    report.add("echo " + i + " failed: " + back.statusText());
                } else if (!Arrays.equals(message, echo.data())) {
                    report.add("echo " + i + " wrong: " + new String(echo.data(), StandardCharsets.UTF_8));
                } else {
                    echoed++;
                }
            }
            report.add("sent " + k);
            report.add("send-completions " + completed);
            report.add("completed-without-waiting " + polled);
            report.add("echoes " + echoed);
            return new Sent(report, endpoint.localAddress());
        }
    }

    static String message(int i) {
        return "message-" + i;
    }
}
