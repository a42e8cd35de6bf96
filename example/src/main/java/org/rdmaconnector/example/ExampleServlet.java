package org.rdmaconnector.example;

import jakarta.ejb.EJB;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;

/**
 * Runs the client: {@code GET /rdma-example/run?host=10.0.0.1&port=7471&messages=1000&size=64}; answers with the
 * report's lines, or {@code error ...}.
 */
@WebServlet("/run")
public class ExampleServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @EJB
    private EchoClient client;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain;charset=UTF-8");
        PrintWriter out = response.getWriter();
        try {
            InetSocketAddress service = new InetSocketAddress(param(request, "host", "10.0.0.1"),
                Integer.parseInt(param(request, "port", "7471")));
            LatencyReport report = client.run(service, Integer.parseInt(param(request, "messages", "1000")),
                Integer.parseInt(param(request, "size", "64")));
            report.lines().forEach(out::println);
        } catch (Exception e) {
            response.setStatus(500);
            out.println("error " + e);
            for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
                out.println("caused-by " + cause);
            }
        }
    }

    private static String param(HttpServletRequest request, String name, String otherwise) {
        String value = request.getParameter(name);
        return value == null || value.isBlank() ? otherwise : value;
    }
}
