package org.rdmaconnector.it.wildfly;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.importer.ZipImporter;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.jboss.shrinkwrap.api.spec.ResourceAdapterArchive;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The real rdma-connector.rar and the test application in WildFly 39 standalone-full, archive validation with
 * fail-on-warn, on the build host (which has no RDMA device): the rar deploys, the application's bean gets the pooled
 * factory injected, getConnection fails with the adapter's clear message, both MDB activations report in JMX that
 * they wait for the device, a rar with a validation warning is refused, and undeploying leaves a clean log.
 */
@ExtendWith(ArquillianExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@RunAsClient
public class WildFlyIT {
    static final String RAR = "rar";
    static final String APP = "app";
    static final String BAD_RAR = "bad-rar";
    private static final Path SERVER_LOG = Path.of(System.getProperty("wildfly.base.dir"), "log", "server.log");
    private static final String BASE_URL = "http://127.0.0.1:" + (8080
        + Integer.getInteger("wildfly.port.offset", 100)) + "/rdma-it-app/rdma/";

    @Deployment(name = RAR, order = 1, managed = false, testable = false)
    public static ResourceAdapterArchive rar() {
        return ShrinkWrap.create(ZipImporter.class, "rdma-connector.rar")
            .importFrom(new File(System.getProperty("rdma.rar"))).as(ResourceAdapterArchive.class);
    }

    @Deployment(name = APP, order = 2, managed = false, testable = false)
    public static WebArchive app() {
        return ShrinkWrap.create(ZipImporter.class, "rdma-it-app.war")
            .importFrom(new File(System.getProperty("rdma.app.war"))).as(WebArchive.class);
    }

    /**
     * The real rar with one more connection definition whose factory has an {@code int} config property: a
     * validation WARNING, refused only under fail-on-warn.
     */
    @Deployment(name = BAD_RAR, managed = false, testable = false)
    public static ResourceAdapterArchive badRar() throws Exception {
        String raXml = new String(rar().get("META-INF/ra.xml").getAsset().openStream().readAllBytes(),
            StandardCharsets.UTF_8);
        String badDefinition = """
              <connection-definition>
                <managedconnectionfactory-class>%s</managedconnectionfactory-class>
                <config-property>
                  <config-property-name>Retries</config-property-name>
                  <config-property-type>java.lang.Integer</config-property-type>
                  <config-property-value>3</config-property-value>
                </config-property>
                <connectionfactory-interface>org.rdmaconnector.ra.RdmaConnectionFactory</connectionfactory-interface>
                <connectionfactory-impl-class>org.rdmaconnector.ra.RdmaConnectionFactoryImpl</connectionfactory-impl-class>
                <connection-interface>org.rdmaconnector.connector.RdmaConnection</connection-interface>
                <connection-impl-class>org.rdmaconnector.connector.spi.ConnectionHandle</connection-impl-class>
              </connection-definition>
              <transaction-support>""".formatted(PrimitivePropertyFactory.class.getName());
        String badXml = raXml.replaceFirst("\\s*<transaction-support>", "\n" + badDefinition);
        ResourceAdapterArchive bad = ShrinkWrap.create(ZipImporter.class, "rdma-bad.rar")
            .importFrom(new File(System.getProperty("rdma.rar"))).as(ResourceAdapterArchive.class);
        bad.delete("META-INF/ra.xml");
        bad.delete("META-INF/ironjacamar.xml");
        return bad.addAsManifestResource(new StringAsset(badXml), "ra.xml")
            .addAsLibrary(ShrinkWrap.create(JavaArchive.class, "bad-factory.jar")
                .addClass(PrimitivePropertyFactory.class));
    }

    private static String get(String path) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create(BASE_URL + path)).timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        return response.body();
    }

    private static List<String> statusLines() throws Exception {
        return get("status").lines().toList();
    }

    @Test
    @Order(1)
    void theRarAndTheApplicationDeployUnderFailOnWarn(@ArquillianResource Deployer deployer) throws Exception {
        String config = Files.readString(Path.of(System.getProperty("wildfly.base.dir"), "configuration",
            "standalone-full.xml"));
        assertTrue(config.contains("fail-on-warn=\"true\""), "the server validates archives with fail-on-warn");
        deployer.deploy(RAR);
        deployer.deploy(APP);
        assertTrue(Files.readString(SERVER_LOG).contains("RDMA resource adapter started"));
    }

    @Test
    @Order(2)
    void theBeanGetsTheFactoryInjectedAndGetConnectionNamesTheMissingDevice() throws Exception {
        List<String> lines = statusLines();
        assertEquals("injected true", lines.get(0), String.join("\n", lines));
        assertEquals("connection-error ENOSYS cannot open RDMA channels on the first device with port 1 ACTIVE: "
            + "ibv_get_device_list failed: ENOSYS (38): the kernel has no RDMA support (no ib_uverbs; load the RDMA "
            + "modules or add a Soft-RoCE device with 'rdma link add'), error code: ENOSYS", lines.get(1));
    }

    @Test
    @Order(3)
    void bothActivationsReportThatTheyWaitForTheDevice() throws Exception {
        List<String> activations = statusLines().stream().filter(l -> l.startsWith("activation ")).toList();
        assertEquals(2, activations.size(), String.join("\n", activations));
        Pattern waiting = Pattern.compile("activation \\S*(CmEvents|Completions)\\S* 10\\.0\\.0\\.1:7471 "
            + "WAITING_FOR_DEVICE waiting: rdma_create_event_channel failed: ENODEV \\(19\\): no RDMA device is "
            + "present on this machine; next try in \\d+ s");
        for (String line : activations) {
            assertTrue(waiting.matcher(line).matches(), line);
        }
        String log = Files.readString(SERVER_LOG);
        assertTrue(log.contains("is waiting for its device: rdma_create_event_channel failed: ENODEV"), "logged");
    }

    @Test
    @Order(4)
    void aRarWithAValidationWarningIsRefused(@ArquillianResource Deployer deployer) throws Exception {
        Exception failure = assertThrows(Exception.class, () -> deployer.deploy(BAD_RAR));
        StringBuilder messages = new StringBuilder();
        for (Throwable c = failure; c != null; c = c.getCause()) {
            messages.append(c).append('\n');
        }
        // the deploy operation names only the validator's report; the server runs on this machine, so read it
        Matcher report = Pattern.compile("Validation failures - see: (\\S+\\.rar\\.log)").matcher(messages);
        assertTrue(report.find(), messages.toString());
        String validation = Files.readString(Path.of(report.group(1)));
        assertTrue(validation.contains("Severity: WARNING"), validation);
        assertTrue(validation.contains("Invalid config-property-type for ManagedConnectionFactory"), validation);
        assertTrue(validation.contains(PrimitivePropertyFactory.class.getName()), validation);
    }

    @Test
    @Order(5)
    void undeployingStopsTheListenersAndTheAdapterCleanly(@ArquillianResource Deployer deployer) throws Exception {
        long before = Files.size(SERVER_LOG);
        deployer.undeploy(APP);
        deployer.undeploy(RAR);
        String log = Files.readString(SERVER_LOG).substring((int) before);
        assertTrue(log.contains("RDMA listener on 10.0.0.1:7471 stopped"), log);
        assertTrue(log.contains("RDMA resource adapter stopped"), log);
        List<String> problems = log.lines()
            .filter(l -> l.contains(" ERROR ") || (l.contains(" WARN ") && l.toLowerCase().contains("rdma")))
            .toList();
        assertEquals(List.of(), problems, "undeploy logs no error and no RDMA warning");
    }
}
