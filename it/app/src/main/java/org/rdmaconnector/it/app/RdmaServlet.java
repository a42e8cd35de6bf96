package org.rdmaconnector.it.app;

import jakarta.ejb.EJB;
import jakarta.resource.ResourceException;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.rdmaconnector.connector.RdmaConnection;

/**
 * The test's window into the server, one fact per line: {@code GET /rdma/status} (injection, what getConnection
 * answers, the activations' JMX state), {@code GET /rdma/run?k=K} (the end-to-end exchange and what the MDBs saw).
 */
@WebServlet("/rdma/*")
public class RdmaServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @EJB
    private Client client;
    @EJB
    private Recorder recorder;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain;charset=UTF-8");
        List<String> lines = new ArrayList<>();
        try {
            if ("/run".equals(request.getPathInfo())) {
                run(Integer.parseInt(request.getParameter("k")), lines);
            } else {
                status(lines);
            }
        } catch (Exception e) {
            lines.add("error " + e);
        }
        PrintWriter out = response.getWriter();
        for (String line : lines) {
            out.println(line);
        }
    }

    private void status(List<String> lines) throws Exception {
        lines.add("injected " + (client.factory() != null));
        try (RdmaConnection connection = client.factory().getConnection()) {
            lines.add("connection ok " + connection.deviceName());
        } catch (ResourceException e) {
            lines.add("connection-error " + e.getErrorCode() + " " + e.getMessage());
        }
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Set<String> activations = new TreeSet<>();
        for (ObjectName name : server.queryNames(new ObjectName("org.rdmaconnector:type=Activation,*"), null)) {
            activations.add("activation " + server.getAttribute(name, "Endpoint") + " "
                + server.getAttribute(name, "ListenAddress") + " " + server.getAttribute(name, "State") + " "
                + server.getAttribute(name, "StateDetail"));
        }
        lines.addAll(activations);
    }

    private void run(int k, List<String> lines) throws Exception {
        recorder.clear();
        lines.addAll(client.send(k));
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < deadline
            && (recorder.received().size() < k || !recorder.cmEvents().contains("DISCONNECTED"))) {
            Thread.sleep(20);
        }
        List<String> received = recorder.received();
        List<Long> sequences = recorder.receiveSequences();
        boolean inOrder = received.size() == k && sequences.size() == k;
        for (int i = 0; inOrder && i < k; i++) {
            inOrder = received.get(i).equals(Client.message(i)) && sequences.get(i) == i + 1;
        }
        lines.add("cm-events " + String.join(",", recorder.cmEvents()));
        lines.add("received " + received.size());
        lines.add("received-in-order " + inOrder);
        lines.add("first " + (received.isEmpty() ? "-" : received.get(0)));
        lines.add("last " + (received.isEmpty() ? "-" : received.get(received.size() - 1)));
    }
}
