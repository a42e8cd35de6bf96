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
import java.util.concurrent.TimeUnit;
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
 * they wait for the device, a rar with a validation warning is refused, and undeploying leaves a clean log. Then the
 * rar and the application are undeployed and deployed again {@value #REDEPLOYS} times with traffic in between: the
 * server's threads and fds stay flat and no class loader of an undeployed rar stays loaded.
 */
@ExtendWith(ArquillianExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Order(1) // first on the fresh server, for the redeploy check's class-loader allowance (junit-platform.properties)
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
                <connectionfactory-interface>org.rdmaconnector.connector.RdmaConnectionFactory</connectionfactory-interface>
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

    /** {@code GET} of the test application's {@code /rdma/PATH}: its body, after checking the status is 200. */
    static String get(String path) throws Exception {
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
            + "modules or add a Soft-RoCE device with 'rdma link add')", lines.get(1));
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

    static final int REDEPLOYS = 20;
    // a class of the rar's own jar, and one of the jna.jar inside it: both come from the rar's class loader
    private static final String RAR_CLASS = "org.rdmaconnector.ra.RdmaResourceAdapter";
    private static final String JNA_CLASS = "com.sun.jna.Native";
    // server threads and fds that come and go on their own (pool threads idling out, a log file): far below one
    // leaked per cycle, which would show as 20
    private static final int SLACK = 2;
    // rar class loaders an idle server may keep: a WildFly pool thread holds the last Work it ran (a class of ours)
    // until it runs another one, so the loader of the last deployment whose loop ran on it stays
    private static final int MAX_KEPT_LOADERS = 2;
    // measured: 34 s until the old loaders were collected after 20 cycles (JNA's cleaner threads linger 30 s); 117 s
    // before the server ran with -XX:SoftRefLRUPolicyMSPerMB=0 (soft references to them lived on, see pom.xml)
    private static final Duration SETTLE = Duration.ofSeconds(240);

    /** Threads and fds of the server, and how many class loaders have the rar's classes loaded. */
    private record Snapshot(int threads, int fds, int libffiFds, int rarLoaders, int jnaLoaders) {
        static Snapshot of(ServerProcess server) throws Exception {
            return new Snapshot(server.threads(), server.fds(), server.libffiFds(), server.loadedCopies(RAR_CLASS),
                server.loadedCopies(JNA_CLASS));
        }

        boolean settledAgainst(Snapshot baseline) {
            return rarLoaders <= MAX_KEPT_LOADERS && jnaLoaders <= MAX_KEPT_LOADERS && (baseline == null
                || threads <= baseline.threads + SLACK && fds <= baseline.fds + SLACK);
        }

        @Override
        public String toString() {
            return "threads=" + threads + ", fds=" + fds + " (+ libffi " + libffiFds + "), rar class loaders="
                + rarLoaders + " (JNA " + jnaLoaders + ")";
        }
    }

    @Test
    @Order(6)
    void redeployingWithTrafficLeavesThreadsFdsAndClassLoadersFlat(@ArquillianResource Deployer deployer)
        throws Exception {
        ServerProcess server = ServerProcess.withBaseDir(Path.of(System.getProperty("wildfly.base.dir")));
        long logStart = Files.size(SERVER_LOG);
        cycle(deployer); // warm-up: what the server creates once (pool threads, caches) exists from here on
        long settleStart = System.nanoTime();
        Snapshot before = settle(server, null);
        long baselineMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - settleStart);
        long start = System.nanoTime();
        for (int i = 0; i < REDEPLOYS; i++) {
            cycle(deployer);
        }
        long cyclesMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        settleStart = System.nanoTime();
        Snapshot after = settle(server, before);
        long settleMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - settleStart);
        String figures = "WildFlyIT redeploy: " + REDEPLOYS + " undeploy/deploy cycles of the rar and the app with "
            + "traffic in " + cyclesMillis + " ms; before (after a warm-up cycle, settled in " + baselineMillis
            + " ms) " + before + "; after (settled in " + settleMillis + " ms) " + after;
        System.out.println(figures);
        assertTrue(after.rarLoaders() <= MAX_KEPT_LOADERS, "the rar's class loaders were collected: " + figures);
        assertTrue(after.jnaLoaders() <= MAX_KEPT_LOADERS, "the loaders of the rar's JNA were collected: " + figures);
        assertTrue(after.threads() <= before.threads() + SLACK, "threads flat: " + figures);
        assertTrue(after.fds() <= before.fds() + SLACK, "fds flat: " + figures);
        // the one known leak, JNA's: each deployment loads its own libjnidispatch, whose libffi keeps one fd open
        assertTrue(after.libffiFds() <= before.libffiFds() + REDEPLOYS, "one libffi fd per deployment at most: "
            + figures);

        String log = Files.readString(SERVER_LOG).substring((int) logStart);
        assertEquals(REDEPLOYS + 1, count(log, "RDMA resource adapter started"), "every cycle started the adapter");
        assertEquals(REDEPLOYS + 1, count(log, "RDMA resource adapter stopped"), "every cycle stopped it");
        // expected on this host: the listeners wait for a device, the pool logs the bean's failed getConnection
        List<String> problems = log.lines()
            .filter(l -> l.contains(" ERROR ") || (l.contains(" WARN ") && l.toLowerCase().contains("rdma")))
            .filter(l -> !l.contains("is waiting for its device") && !l.contains("IJ000604"))
            .toList();
        assertEquals(List.of(), problems, "the cycles log no error and no unexpected RDMA warning");
    }

    /** Deploys the rar and the app, sends traffic (the bean's getConnection: no device here), undeploys both. */
    private static void cycle(Deployer deployer) throws Exception {
        deployer.deploy(RAR);
        deployer.deploy(APP);
        List<String> lines = statusLines();
        assertEquals("injected true", lines.get(0), String.join("\n", lines));
        assertTrue(lines.get(1).startsWith("connection-error ENOSYS "), String.join("\n", lines));
        assertEquals(2, lines.stream().filter(l -> l.startsWith("activation ")).count(), String.join("\n", lines));
        deployer.undeploy(APP);
        deployer.undeploy(RAR);
    }

    /**
     * Runs a GC in the server until at most {@link #MAX_KEPT_LOADERS} class loaders have the rar's classes and,
     * against {@code baseline}, threads and fds are back (within {@link #SLACK}), or {@link #SETTLE} passed;
     * returns the last snapshot.
     */
    private static Snapshot settle(ServerProcess server, Snapshot baseline) throws Exception {
        long start = System.nanoTime();
        long deadline = start + SETTLE.toNanos();
        Snapshot last = null;
        while (true) {
            server.gc();
            Snapshot now = Snapshot.of(server);
            if (!now.equals(last)) { // how it settles, in the test's output
                System.out.println("WildFlyIT settling, " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)
                    + " ms: " + now);
                last = now;
            }
            if (now.settledAgainst(baseline) || System.nanoTime() - deadline >= 0) {
                return now;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(1)); // poll pace
        }
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + what.length())) {
            n++;
        }
        return n;
    }
}
