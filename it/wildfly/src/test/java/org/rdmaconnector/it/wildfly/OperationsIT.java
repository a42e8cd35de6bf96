package org.rdmaconnector.it.wildfly;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.importer.ZipImporter;
import org.jboss.shrinkwrap.api.spec.ResourceAdapterArchive;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.rdmaconnector.it.wildfly.ops.GivesUp;
import org.rdmaconnector.it.wildfly.ops.HeldEcho;
import org.rdmaconnector.it.wildfly.ops.OpsServlet;
import org.rdmaconnector.it.wildfly.ops.Twin;

/**
 * Operating the adapter in WildFly 39 through the activations' MBeans, on the build host (no RDMA device): the rar
 * with adapter-level setup retry (3 tries from 100 ms, set in its ironjacamar.xml) and two applications. An MDB
 * without retry settings of its own gives up after the adapter's 3 tries (GAVE_UP, with the reason, logged) and
 * retrySetup tries again; an MDB with its own settings retries for ever; an MDB with deliveryActive=false starts
 * paused, and pauseDelivery/resumeDelivery switch it; the same MDB class in two applications is two MBeans.
 * (Held traffic needs a device: PauseDeviceTest in the soft-RDMA tier.)
 */
@ExtendWith(ArquillianExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@RunAsClient
public class OperationsIT {
    private static final Path SERVER_LOG = Path.of(System.getProperty("wildfly.base.dir"), "log", "server.log");
    private static final String BASE_URL = "http://127.0.0.1:" + (8080
        + Integer.getInteger("wildfly.port.offset", 100)) + "/rdma-ops-a/ops/";
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final String MANIFEST = "Manifest-Version: 1.0\nDependencies: deployment.rdma-connector.rar\n";
    private static final String BINDING = """
        <jboss:ejb-jar xmlns:jboss="urn:jboss:jakartaee:1.0" xmlns="https://jakarta.ee/xml/ns/jakartaee"
                       xmlns:mdb="urn:resource-adapter-binding:2.0" version="4.0" impl-version="2.0">
          <assembly-descriptor>
            <mdb:resource-adapter-binding>
              <ejb-name>*</ejb-name>
              <mdb:resource-adapter-name>rdma-connector.rar</mdb:resource-adapter-name>
            </mdb:resource-adapter-binding>
          </assembly-descriptor>
        </jboss:ejb-jar>
        """;

    /** The real rar; its ironjacamar.xml also sets the adapter's SetupIntervalMillis, ...MaxIntervalMillis, Attempts. */
    @Deployment(name = "ops-rar", order = 1, testable = false)
    public static ResourceAdapterArchive rar() throws Exception {
        ResourceAdapterArchive rar = ShrinkWrap.create(ZipImporter.class, "rdma-connector.rar")
            .importFrom(new File(System.getProperty("rdma.rar"))).as(ResourceAdapterArchive.class);
        String ironjacamar = new String(rar.get("META-INF/ironjacamar.xml").getAsset().openStream().readAllBytes(),
            StandardCharsets.UTF_8);
        String configured = ironjacamar.replaceFirst("\\s*<transaction-support>", """

              <config-property name="SetupIntervalMillis">100</config-property>
              <config-property name="SetupMaxIntervalMillis">400</config-property>
              <config-property name="SetupAttempts">3</config-property>
              <transaction-support>""");
        assertTrue(configured.contains("SetupAttempts"), "the adapter's properties went into ironjacamar.xml");
        rar.delete("META-INF/ironjacamar.xml");
        return rar.addAsManifestResource(new StringAsset(configured), "ironjacamar.xml");
    }

    @Deployment(name = "ops-a", order = 2, testable = false)
    public static WebArchive first() {
        return ShrinkWrap.create(WebArchive.class, "rdma-ops-a.war")
            .addClasses(HeldEcho.class, GivesUp.class, Twin.class, OpsServlet.class)
            .addAsWebInfResource(new StringAsset(BINDING), "jboss-ejb3.xml").setManifest(new StringAsset(MANIFEST));
    }

    @Deployment(name = "ops-b", order = 3, testable = false)
    public static WebArchive second() {
        return ShrinkWrap.create(WebArchive.class, "rdma-ops-b.war").addClasses(Twin.class)
            .addAsWebInfResource(new StringAsset(BINDING), "jboss-ejb3.xml").setManifest(new StringAsset(MANIFEST));
    }

    private static String get(String path) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create(BASE_URL + path)).timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        return response.body();
    }

    /** The status line of one activation ("Endpoint instance ..."), or null. */
    private static String line(String endpoint, int instance) throws Exception {
        return get("status").lines().filter(l -> l.startsWith(endpoint + " " + instance + " ")).findFirst()
            .orElse(null);
    }

    /** Polls the activation's status line until {@code condition} holds; fails with the last line at the deadline. */
    private static String await(String endpoint, int instance, Predicate<String> condition) throws Exception {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        String last = line(endpoint, instance);
        while ((last == null || !condition.test(last)) && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // the next look
            last = line(endpoint, instance);
        }
        assertTrue(last != null && condition.test(last), endpoint + " " + instance + ": " + last);
        return last;
    }

    private static String invoke(String endpoint, int instance, String operation) throws Exception {
        return get("invoke?endpoint=" + endpoint + "&instance=" + instance + "&op=" + operation).trim();
    }

    private static long logged(String text) throws Exception {
        return Pattern.compile(Pattern.quote(text)).matcher(Files.readString(SERVER_LOG)).results().count();
    }

    @Test
    @Order(1)
    void anActivationWithoutSettingsOfItsOwnGivesUpAfterTheAdaptersAttemptsAndSaysWhy() throws Exception {
        String line = await("GivesUp", 1, l -> l.contains(" GAVE_UP "));
        assertTrue(line.contains("| gave up after 3 tries (SetupAttempts 3): rdma_create_event_channel failed: "
            + "ENODEV (19): no RDMA device is present on this machine; retrySetup() in JMX, or redeploy, to try "
            + "again"), line);
        assertEquals(1, logged("GivesUp] gave up listening after 3 tries (SetupAttempts 3)"), "logged at ERROR");
    }

    @Test
    @Order(2)
    void anActivationsOwnSetupRetryWinsOverTheAdapters() throws Exception {
        String line = line("HeldEcho", 1);
        assertTrue(Pattern.matches("HeldEcho 1 WAITING_FOR_DEVICE active=false held=0 \\| waiting: "
            + "rdma_create_event_channel failed: ENODEV \\(19\\): no RDMA device is present on this machine; next "
            + "try in \\d+ s", line), "retries for ever (no count of tries), from 2 s: " + line);
    }

    @Test
    @Order(3)
    void retrySetupTriesAgainWithAFreshCountAndGivesUpAgainWithDebugTurnedOnAsTheReadmeSays() throws Exception {
        assertEquals(0, logged(" DEBUG [org.rdmaconnector."), "INFO by default");
        cli("/subsystem=logging/logger=org.rdmaconnector:add(level=DEBUG)"); // README, "Logging"
        try {
            retryAndGiveUpAgain();
        } finally {
            cli("/subsystem=logging/logger=org.rdmaconnector:remove"); // the server as it was, for the next class
        }
        assertTrue(logged(" DEBUG [org.rdmaconnector.connector.spi.Listener]") > 0, "the retries at DEBUG");
    }

    private static void retryAndGiveUpAgain() throws Exception {
        assertEquals("false", invoke("HeldEcho", 1, "retrySetup"), "it has not given up");
        assertEquals("true", invoke("GivesUp", 1, "retrySetup"));
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (logged("GivesUp] gave up listening after 3 tries") < 2 && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
        assertEquals(2, logged("GivesUp] gave up listening after 3 tries"), "three more tries, then given up again");
        assertTrue(line("GivesUp", 1).contains(" GAVE_UP "), line("GivesUp", 1));
    }

    /** Runs one jboss-cli command against the test server; fails unless it succeeds within a minute. */
    private static void cli(String command) throws Exception {
        Path script = Path.of(System.getProperty("jboss.home"), "bin", "jboss-cli.sh");
        Process cli = new ProcessBuilder(script.toString(), "--connect", "--controller=remote+http://127.0.0.1:"
            + System.getProperty("wildfly.management.port", "10090"), "--command=" + command)
            .redirectErrorStream(true).start();
        boolean ended = cli.waitFor(60, TimeUnit.SECONDS);
        String output = new String(cli.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!ended) {
            cli.destroyForcibly();
        }
        assertTrue(ended && cli.exitValue() == 0 && output.contains("\"outcome\" => \"success\""),
            command + ": " + output);
    }

    @Test
    @Order(4)
    void deliveryActiveFalseStartsPausedAndTheOperationsResumeAndPause() throws Exception {
        assertTrue(line("HeldEcho", 1).contains(" active=false held=0 "), line("HeldEcho", 1));
        assertEquals("true", invoke("HeldEcho", 1, "resumeDelivery"));
        assertTrue(line("HeldEcho", 1).contains(" active=true "), line("HeldEcho", 1));
        assertEquals("false", invoke("HeldEcho", 1, "resumeDelivery"), "delivering already");
        assertEquals("true", invoke("HeldEcho", 1, "pauseDelivery"));
        assertTrue(line("HeldEcho", 1).contains(" active=false "), line("HeldEcho", 1));
        assertEquals(1, logged("endpoint " + HeldEcho.class.getName() + " on 10.0.0.1:7481: delivery resumed"));
        assertEquals(1, logged("endpoint " + HeldEcho.class.getName() + " on 10.0.0.1:7481: delivery paused"));
    }

    @Test
    @Order(5)
    void theSameMdbInTwoApplicationsIsTwoMBeansEachPausedOnItsOwn() throws Exception {
        List<String> twins = get("status").lines().filter(l -> l.startsWith("Twin ")).toList();
        assertEquals(2, twins.size(), String.join("\n", twins));
        assertTrue(line("Twin", 2) != null, "the second under instance=2: " + twins);
        assertEquals("true", invoke("Twin", 2, "pauseDelivery"));
        assertTrue(line("Twin", 2).contains(" active=false "), line("Twin", 2));
        assertTrue(line("Twin", 1).contains(" active=true "), "the other application's is its own: "
            + line("Twin", 1));
    }
}
