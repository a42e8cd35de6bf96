package org.rdmaconnector.it.app;

import jakarta.annotation.Resource;
import jakarta.ejb.Stateless;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.ra.RdmaConnectionFactory;
import org.rdmaconnector.verbs.WorkCompletion;

/** The outbound side: a pooled connection from the injected factory, K messages to the MDBs' listener. */
@Stateless
public class Client {
    static final InetSocketAddress LISTENER = new InetSocketAddress("10.0.0.1", 7471);

    @Resource(name = "rdma/factory")
    private RdmaConnectionFactory factory;

    public RdmaConnectionFactory factory() {
        return factory;
    }

    /** Connects, sends {@code k} messages and waits on each Completion; one report line per fact. */
    public List<String> send(int k) throws Exception {
        List<String> report = new ArrayList<>();
        try (RdmaConnection connection = factory.getConnection();
             RdmaEndpoint endpoint = connection.connect(LISTENER, Duration.ofSeconds(30))) {
            report.add("device " + connection.deviceName());
            int completed = 0;
            int polled = 0;
            for (int i = 0; i < k; i++) {
                WorkRequest request = endpoint.send(message(i).getBytes(StandardCharsets.UTF_8));
                if (request.completion().tryWaitForCompletion()) {
                    polled++; // done before we waited: the non-blocking path
                } else if (!request.completion().waitForCompletion(Duration.ofSeconds(30))) {
                    report.add("send " + i + " timed out");
                    continue;
                }
                WorkCompletion wc = request.result();
                if (wc.isSuccess()) {
                    completed++;
                } else {
                    report.add("send " + i + " failed: " + wc.statusText());
                }
            }
            report.add("sent " + k);
            report.add("send-completions " + completed);
            report.add("completed-without-waiting " + polled);
        }
        return report;
    }

    static String message(int i) {
        return "message-" + i;
    }
}
