package org.rdmaconnector.it.wildfly.ops;

import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The activations' MBeans as an operator sees them in the server's JMX: {@code /ops/status} one line each
 * ({@code <Endpoint simple name> <instance> <State> active=<DeliveryActive> held=<Held> | <StateDetail>}), and
 * {@code /ops/invoke?endpoint=GivesUp&instance=1&op=retrySetup} runs an operation and prints what it returned.
 */
@WebServlet("/ops/*")
public class OpsServlet extends HttpServlet {
    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain");
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            if ("/invoke".equals(request.getPathInfo())) {
                ObjectName name = find(server, request.getParameter("endpoint"), request.getParameter("instance"));
                response.getWriter().println(name == null ? "no such activation"
                    : server.invoke(name, request.getParameter("op"), null, null));
                return;
            }
            TreeSet<String> lines = new TreeSet<>();
            for (ObjectName name : activations(server)) {
                lines.add(simpleName(server, name) + " " + instance(name) + " " + server.getAttribute(name, "State")
                    + " active=" + server.getAttribute(name, "DeliveryActive") + " held="
                    + server.getAttribute(name, "Held") + " | " + server.getAttribute(name, "StateDetail"));
            }
            lines.forEach(response.getWriter()::println);
        } catch (JMException e) {
            throw new IOException(e);
        }
    }

    private static List<ObjectName> activations(MBeanServer server) throws JMException {
        return new ArrayList<>(server.queryNames(new ObjectName("org.rdmaconnector:type=Activation,*"), null));
    }

    private static ObjectName find(MBeanServer server, String endpoint, String instance) throws JMException {
        for (ObjectName name : activations(server)) {
            if (simpleName(server, name).equals(endpoint) && instance(name).equals(instance)) {
                return name;
            }
        }
        return null;
    }

    private static String simpleName(MBeanServer server, ObjectName name) throws JMException {
        String endpoint = (String) server.getAttribute(name, "Endpoint");
        return endpoint.substring(endpoint.lastIndexOf('.') + 1);
    }

    private static String instance(ObjectName name) {
        String instance = name.getKeyProperty("instance");
        return instance == null ? "1" : instance;
    }
}
