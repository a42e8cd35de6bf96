package org.rdmaconnector.it.checks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the test application ({@code rdma-it-app}) answers at {@code GET /rdma-it-app/rdma/status} (one fact per
 * line), and the answers expected on a host without an RDMA device, on every server alike.
 */
public final class StatusPage {
    /** The beans of rdma-it-app that listen, and where. */
    public static final List<String> APP_BEANS = List.of("CmEvents", "Completions");
    public static final String APP_LISTENER = "10.0.0.1:7471";

    private final String body;
    private final List<String> lines;

    private StatusPage(String body) {
        this.body = body;
        this.lines = body.lines().toList();
    }

    /** Fetches the page from a server's HTTP port on this host (and prints it, for the test's output file). */
    public static StatusPage fetch(int httpPort) throws IOException, InterruptedException {
        HttpResponse<String> response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build().send(
            HttpRequest.newBuilder(URI.create("http://localhost:" + httpPort + "/rdma-it-app/rdma/status"))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        System.out.println("GET /rdma-it-app/rdma/status -> " + response.statusCode() + "\n" + response.body());
        assertEquals(200, response.statusCode(), response.body());
        return new StatusPage(response.body());
    }

    public String body() {
        return body;
    }

    /** The {@code activation ENDPOINT ADDRESS:PORT STATE DETAIL} lines (from JMX), sorted. */
    public List<String> activations() {
        return lines.stream().filter(l -> l.startsWith("activation ")).toList();
    }

    /** The activation line of one bean (by the simple name of its class), or an AssertionError naming the page. */
    public String activationOf(String beanClassName) {
        return activations().stream().filter(l -> l.split(" ")[1].endsWith("." + beanClassName)).findFirst()
            .orElseThrow(() -> new AssertionError("no activation of " + beanClassName + " in\n" + body));
    }

    public void assertFactoryInjected() {
        assertTrue(lines.contains("injected true"), body);
    }

    /**
     * getConnection fails with the connector's RdmaException (the servlet prints its errnoName()), the message
     * naming the device ({@code deviceDescription}, e.g. "the first device with port 1
     * ACTIVE" or "device rxe0") and the failed call with the same errno. A host without RDMA in its kernel answers
     * ENOSYS (from ibv_get_device_list), a kernel with RDMA but no device ENODEV.
     */
    public void assertConnectionFailsWithoutDevice(String deviceDescription) {
        String connection = lines.stream().filter(l -> l.startsWith("connection")).findFirst().orElse("(none)");
        Matcher error = Pattern.compile("^connection-error (ENOSYS|ENODEV) cannot open RDMA channels on "
            + Pattern.quote(deviceDescription) + ": \\w+ failed: (\\w+) \\((\\d+)\\): .+").matcher(connection);
        assertTrue(error.matches(), "getConnection fails with the adapter's message and errno; got: " + connection);
        assertEquals(error.group(1), error.group(2), "errnoName() is the errno the message names: " + connection);
    }

    /** One activation per bean of rdma-it-app, all on its listener, waiting for the device with the errno named. */
    public void assertAppActivationsWaitForDevice() {
        assertEquals(APP_BEANS.size(), activations().size(), body);
        for (String bean : APP_BEANS) {
            assertWaitsForDevice(bean, APP_LISTENER);
        }
    }

    /** The bean's activation listens on {@code listener} (ADDRESS:PORT) and waits for its device. */
    public void assertWaitsForDevice(String beanClassName, String listener) {
        String line = activationOf(beanClassName);
        Matcher waiting = Pattern.compile("^activation \\S+ " + Pattern.quote(listener) + " WAITING_FOR_DEVICE "
            + "waiting: rdma_create_event_channel failed: (E[A-Z]+) \\((\\d+)\\): .+").matcher(line);
        assertTrue(waiting.matches(), beanClassName + " waits for the device on " + listener
            + " with the errno named; got: " + line);
    }
}
