package org.rdmaconnector.it.app;

import jakarta.ejb.EJB;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaException;

/**
 * The test's window into the server, one fact per line: {@code GET /rdma/status} (injection, what getConnection
 * answers, the activations' JMX state), {@code GET /rdma/activations} (their JMX state alone),
 * {@code GET /rdma/run?k=K} (the end-to-end exchange and what the MDBs saw of it),
 * {@code GET /rdma/peers?host=H&connections=C&wait=S} (what the MDBs saw of another host's connections).
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
            } else if ("/peers".equals(request.getPathInfo())) {
                peers(request.getParameter("host"), Integer.parseInt(request.getParameter("connections")),
                    Integer.parseInt(request.getParameter("wait")), lines);
            } else if ("/activations".equals(request.getPathInfo())) {
                activations(lines);
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
        } catch (RdmaException e) {
            lines.add("connection-error " + e.errnoName() + " " + e.getMessage());
        }
        activations(lines);
    }

    private void activations(List<String> lines) throws Exception {
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
        Client.Sent sent = client.send(k);
        lines.addAll(sent.report());
        InetSocketAddress bean = sent.local();
        List<Recorder.Seen> seen = recorder.await(s -> s.peer().equals(bean),
            l -> l.size() == 1 && l.get(0).messages().size() >= k && l.get(0).disconnected(), Duration.ofSeconds(60));
        Recorder.Seen connection = seen.isEmpty() ? null : seen.get(0);
        List<String> received = new ArrayList<>();
        if (connection != null) {
            connection.messages().forEach(m -> received.add(new String(m, StandardCharsets.UTF_8)));
        }
        boolean inOrder = received.size() == k && connection.inSequence();
        for (int i = 0; inOrder && i < k; i++) {
            inOrder = received.get(i).equals(Client.message(i));
        }
        lines.add("cm-events " + (connection == null ? "-" : String.join(",", connection.cmEvents())));
        lines.add("received " + received.size());
        lines.add("received-in-order " + inOrder);
        lines.add("first " + (received.isEmpty() ? "-" : received.get(0)));
        lines.add("last " + (received.isEmpty() ? "-" : received.get(received.size() - 1)));
    }

    /**
     * What the MDBs saw of the connections from {@code host}: waits (up to {@code wait} seconds) until
     * {@code connections} of them are {@linkplain Recorder.Seen#settled settled}, then one line per connection
     * ({@link Recorder.Seen#line}) and {@code peer-connections N}.
     */
    private void peers(String host, int connections, int wait, List<String> lines) throws Exception {
        InetAddress peer = InetAddress.getByName(host);
        List<Recorder.Seen> seen = recorder.await(s -> s.peer().getAddress().equals(peer),
            l -> l.stream().filter(Recorder.Seen::settled).count() >= connections, Duration.ofSeconds(wait));
        seen.forEach(s -> lines.add(s.line()));
        lines.add("peer-connections " + seen.size());
    }
}
