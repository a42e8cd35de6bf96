package org.rdmaconnector.it.glassfish;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Pattern;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.ResourceAdapterArchive;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.rdmaconnector.it.checks.ReadmeBlock;
import org.rdmaconnector.it.checks.ServerLog;
import org.rdmaconnector.it.checks.StatusPage;

/**
 * The real rdma-connector.rar and rdma-it-app.war in a managed GlassFish 7 or Payara 6 (the build names which, in
 * system property server.name) on a host without an RDMA device, as an administrator would do it: deploy the rar
 * (module rdma-connector), add its connection pool and the connector resource eis/rdma/default, deploy the
 * application; then, over HTTP, the bean has the factory injected, getConnection fails with the adapter's own message
 * and errno, and both MDB activations wait for the device; the README's asadmin commands retune the pool without
 * touching the rar, and an MDB takes its address and port from the server's environment where the server supports
 * it; then undeploy everything, and the server log shows the adapter stopped and no warning or error (the server's
 * own warnings are listed in {@link #SERVER_OWN} and printed, not counted).
 *
 * <p>The steps are ordered tests sharing one server; a step whose precondition failed is skipped, not failed.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GlassFishIT {
    private static final String RAR = "rar";
    private static final String APP = "app";
    private static final String CONFIGURED = "configured";
    private static final String SERVER = System.getProperty("server.name", "GlassFish");
    private static final String POOL = "rdma-pool";
    private static final String RESOURCE = "eis/rdma/default";
    private static final Path HOME = Path.of(System.getProperty("glassfish.home"));
    private static final Path DEPLOYMENTS = Path.of(System.getProperty("it.deployments.dir"));
    private static final int ADMIN_PORT = Integer.getInteger("glassfish.admin.port", 14848);
    private static final int HTTP_PORT = Integer.getInteger("glassfish.http.port", 18080);
    private static final Duration LOG_WAIT = Duration.ofSeconds(30);

    /**
     * Warnings the server logs on its own, named here so they are shown but not counted: the first lookup of a pool
     * created after boot (pools are initialized lazily); Payara: the expired CA certificates of its trust store
     * (at the first admin command), and its report of each getConnection the test makes fail (no device; GlassFish
     * does not log those).
     */
    static final List<Pattern> SERVER_OWN = List.of(
        Pattern.compile("^\\s*Probably the pool \\S+\\[jndiName=" + POOL + ", applicationName=null, moduleName=null\\] "
            + "is not yet initialized \\(lazy-loading\\), trying to check \\.\\.\\.\\]\\]$", Pattern.MULTILINE),
        Pattern.compile("^\\s*The SSL certificate with alias [^\\n]+ has expired: \\[$", Pattern.MULTILINE),
        Pattern.compile("^\\s*RAR5038:Unexpected exception while creating resource for pool " + POOL + "\\. Exception : "
            + "\\S+: cannot open RDMA channels on ", Pattern.MULTILINE),
        Pattern.compile("^\\s*RAR5117 : Failed to obtain/create connection from connection pool \\[ " + POOL + " \\]\\. "
            + "Reason : com\\.sun\\.appserv\\.connectors\\.internal\\.api\\.PoolingException: cannot open RDMA channels on ",
            Pattern.MULTILINE));

    private static final ServerLog LOG = ServerLog.odl(HOME.resolve("glassfish/domains/domain1/logs/server.log"));
    private static final Asadmin ASADMIN = new Asadmin(HOME, ADMIN_PORT);

    /** Where the log stood before the rar was deployed: the window the last step checks. */
    private static long logMark = -1;
    /** Whether the server writes its log this run (see {@link #serverLogs()}); null until checked. */
    private static Boolean serverLogs;
    private static boolean rarDeployed;
    private static boolean resourcesAdded;
    private static boolean appDeployed;
    /**
     * How often each listener (ADDRESS:PORT) warns that it waits for its device: once per start (the application's
     * deployment, its restart in step 5; step 6's listener on Payara).
     */
    private static final Map<String, Integer> WAITING_WARNINGS = new TreeMap<>(Map.of(StatusPage.APP_LISTENER, 1));
    /** The texts of the warnings and errors step 6 expects (GlassFish refusing the unsubstituted activation). */
    private static final Set<String> EXPECTED_REFUSAL = new HashSet<>();

    @ArquillianResource
    private Deployer deployer;

    /** The module name GlassFish gives a deployment is its archive's name without the extension. */
    @Deployment(name = RAR, managed = false, testable = false, order = 1)
    public static ResourceAdapterArchive rar() {
        return ShrinkWrap.createFromZipFile(ResourceAdapterArchive.class,
            DEPLOYMENTS.resolve("rdma-connector.rar").toFile());
    }

    @Deployment(name = APP, managed = false, testable = false, order = 2)
    public static WebArchive app() {
        return ShrinkWrap.createFromZipFile(WebArchive.class, DEPLOYMENTS.resolve("rdma-it-app.war").toFile());
    }

    /** {@link ConfiguredEvents} alone, bound to rdma-connector like rdma-it-app's MDBs. */
    @Deployment(name = CONFIGURED, managed = false, testable = false, order = 3)
    public static WebArchive configured() {
        return ShrinkWrap.create(WebArchive.class, "rdma-it-configured.war").addClass(ConfiguredEvents.class)
            .addAsWebInfResource(new StringAsset("""
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE glassfish-ejb-jar PUBLIC "-//GlassFish.org//DTD GlassFish Application Server 3.1 EJB 3.1//EN"
                  "http://glassfish.org/dtds/glassfish-ejb-jar_3_1-1.dtd">
                <glassfish-ejb-jar>
                  <enterprise-beans>
                    <ejb>
                      <ejb-name>ConfiguredEvents</ejb-name>
                      <mdb-resource-adapter>
                        <resource-adapter-mid>rdma-connector</resource-adapter-mid>
                      </mdb-resource-adapter>
                    </ejb>
                  </enterprise-beans>
                </glassfish-ejb-jar>
                """), "glassfish-ejb-jar.xml");
    }

    /**
     * GlassFish 7.0.x installs its log manager lazily and, often on these machines, loses the race with something
     * else in the JVM that touches java.util.logging first (eclipse-ee4j/glassfish#25133; 7.1.0 sets it on the
     * command line): its server.log then gets nothing after the launcher's record for the whole run, and a restart
     * does not mend it cleanly (the new JVM finds the JMX port still taken). Then the checks of the log cannot run
     * here; they say so loudly, and the same checks run on Payara (the same test), whose logging does not have the
     * bug. Everything else is checked either way.
     */
    private static boolean serverLogs() throws Exception {
        if (serverLogs == null) {
            serverLogs = LOG.await(0, entry -> !entry.logger().equals("jakarta.enterprise.launcher"), LOG_WAIT);
            if (!serverLogs) {
                System.err.println("\n*** " + SERVER + " STARTED WITHOUT ITS LOGGING: server.log has only the "
                    + "launcher's record (eclipse-ee4j/glassfish#25133); THE CHECKS OF THE SERVER LOG ARE SKIPPED IN "
                    + "THIS RUN (they run on Payara) ***\n");
            }
        }
        return serverLogs;
    }

    @Test
    @Order(1)
    void theRarDeploysAsRdmaConnectorAndItsAdapterStarts() throws Exception {
        logMark = LOG.mark();
        try {
            deployer.deploy(RAR);
        } catch (Exception e) {
            fail("deploying rdma-connector.rar failed: " + e + "\nserver modules exporting com.sun.jna to every "
                + "application (ahead of the rar's own jna.jar): " + serverModulesExporting("com.sun.jna")
                + "\nserver log since:\n" + LOG.warningsSince(logMark), e);
        }
        rarDeployed = true;
        if (serverLogs()) {
            assertTrue(LOG.await(logMark, entry -> entry.logger().equals("org.rdmaconnector.ra.RdmaResourceAdapter")
                && entry.text().endsWith("RDMA resource adapter started]]"), LOG_WAIT),
                "the adapter logs its start; records in server.log since the deploy began: "
                    + LOG.since(logMark).size());
        }
        Asadmin.Result applications = ASADMIN.run("list-applications");
        assertTrue(Pattern.compile("^rdma-connector\\s+<connector>", Pattern.MULTILINE).matcher(applications.output())
            .find(), applications.toString());
    }

    @Test
    @Order(2)
    void itsConnectionPoolAndConnectorResourceAreAdded() throws Exception {
        assumeTrue(rarDeployed, "rdma-connector is not deployed");
        Path resources = Path.of(GlassFishIT.class.getResource("/glassfish-resources.xml").toURI());
        Asadmin.Result added = ASADMIN.run("add-resources", resources.toString());
        assertTrue(added.succeeded(), added.toString());
        resourcesAdded = true;
        assertTrue(added.output().contains("Connector connection pool " + POOL + " created."), added.toString());
        assertTrue(added.output().contains("Connector resource " + RESOURCE + " created."), added.toString());
        Asadmin.Result listed = ASADMIN.run("list-connector-resources");
        assertTrue(listed.output().lines().anyMatch(RESOURCE::equals), listed.toString());
    }

    @Test
    @Order(3)
    void theApplicationDeploysBesideIt() throws Exception {
        assumeTrue(resourcesAdded, "the connector resource was not added");
        long mark = LOG.mark();
        try {
            deployer.deploy(APP);
        } catch (Exception e) {
            fail("deploying rdma-it-app.war failed: " + e + "\nserver log since:\n" + LOG.warningsSince(mark), e);
        }
        appDeployed = true;
    }

    @Test
    @Order(4)
    void theBeanIsInjectedConnectionsFailClearlyAndBothActivationsWaitForTheDevice() throws Exception {
        assumeTrue(appDeployed, "rdma-it-app is not deployed");
        StatusPage status = StatusPage.fetch(HTTP_PORT);
        status.assertFactoryInjected();
        // no DeviceName configured: the first device with port 1 ACTIVE
        status.assertConnectionFailsWithoutDevice("the first device with port 1 ACTIVE");
        status.assertAppActivationsWaitForDevice();
    }

    /**
     * The README's asadmin commands, run as written, retune the pool of the deployed rar; the application, restarted
     * as the README says (its injected factory keeps the connection definition it was made with), gets a factory
     * whose getConnection names the device they set, and the server reports the pool sizes they set.
     */
    @Test
    @Order(5)
    void theReadmesAsadminCommandsRetuneThePoolWithoutTouchingTheRar() throws Exception {
        assumeTrue(appDeployed, "rdma-it-app is not deployed");
        List<String> commands = ReadmeBlock.lines("glassfish-per-environment").stream()
            .filter(l -> !l.isBlank() && !l.startsWith("#")).toList();
        assertTrue(commands.size() >= 4, "the README's block: " + commands);
        for (String line : commands) {
            List<String> words = List.of(line.strip().split("\\s+"));
            assertEquals("asadmin", words.get(0), "each line of the README's block is an asadmin command: " + line);
            Asadmin.Result result = ASADMIN.run(words.subList(1, words.size()).toArray(String[]::new));
            assertTrue(result.succeeded(), result.toString());
        }
        Asadmin.Result pool = ASADMIN.run("get", "resources.connector-connection-pool." + POOL + ".*");
        for (String expected : List.of(".steady-pool-size=0", ".max-pool-size=8", ".property.DeviceName=rxe0",
            ".property.PortNumber=1")) {
            assertTrue(pool.output().lines().anyMatch(l -> l.endsWith(expected)), expected + " in " + pool);
        }
        for (String command : List.of("disable", "enable")) {
            Asadmin.Result result = ASADMIN.run(command, "rdma-it-app");
            assertTrue(result.succeeded(), result.toString());
        }
        WAITING_WARNINGS.merge(StatusPage.APP_LISTENER, 1, Integer::sum);
        StatusPage status = StatusPage.fetch(HTTP_PORT);
        status.assertConnectionFailsWithoutDevice("device rxe0");
        status.assertAppActivationsWaitForDevice();
    }

    /**
     * {@link ConfiguredEvents}: the address from {@code ${ENV=RDMA_ADDRESS}} (the build sets RDMA_ADDRESS=10.0.0.7
     * in the server's environment), the port from {@code ${rdma.port}} (7600, set by the README's
     * create-system-properties in the previous step). Payara substitutes both; GlassFish 7 neither: the activation
     * is refused naming the property, and with it the deployment (see README).
     */
    @Test
    @Order(6)
    void anMdbTakesItsAddressFromTheEnvironmentAndItsPortFromASystemProperty() throws Exception {
        assumeTrue(appDeployed, "rdma-it-app is not deployed");
        long mark = LOG.mark();
        if (SERVER.equals("Payara")) {
            try {
                deployer.deploy(CONFIGURED);
            } catch (Exception e) {
                fail("deploying rdma-it-configured.war failed: " + e + "\nserver log since:\n"
                    + LOG.warningsSince(mark), e);
            }
            try {
                WAITING_WARNINGS.put("10.0.0.7:7600", 1);
                StatusPage.fetch(HTTP_PORT).assertWaitsForDevice("ConfiguredEvents", "10.0.0.7:7600");
            } finally {
                deployer.undeploy(CONFIGURED);
            }
        } else {
            Exception refused = null;
            try {
                deployer.deploy(CONFIGURED);
                deployer.undeploy(CONFIGURED);
            } catch (Exception e) {
                refused = e;
            }
            assertTrue(refused != null, SERVER + " deployed an MDB whose address is ${ENV=RDMA_ADDRESS}: does it "
                + "substitute now? Then update the README and this test");
            if (serverLogs()) {
                List<ServerLog.Entry> warnings = LOG.since(mark).stream().filter(ServerLog.Entry::isWarningOrWorse)
                    .toList();
                assertTrue(warnings.stream().anyMatch(e -> e.text().contains("invalid RDMA activation: Address "
                    + "'${ENV=RDMA_ADDRESS}' is not an IP address")), SERVER + " refuses the activation naming the "
                    + "unresolved address; warnings since the deploy:\n" + ServerLog.describe(warnings));
                warnings.forEach(e -> EXPECTED_REFUSAL.add(e.text()));
            }
        }
    }

    @Test
    @Order(7)
    void undeployingLeavesNoWarningAndTheAdapterStopped() throws Exception {
        assumeTrue(logMark >= 0, "nothing was deployed");
        if (appDeployed) {
            deployer.undeploy(APP);
            appDeployed = false;
        }
        if (resourcesAdded) {
            Asadmin.Result deleted = ASADMIN.run("delete-connector-connection-pool", "--cascade=true", POOL);
            assertTrue(deleted.succeeded(), deleted.toString());
            resourcesAdded = false;
        }
        assumeTrue(rarDeployed, "rdma-connector is not deployed");
        deployer.undeploy(RAR);
        rarDeployed = false;
        Asadmin.Result applications = ASADMIN.run("list-applications");
        assertTrue(applications.output().contains("Nothing to list."), applications.toString());
        assumeTrue(serverLogs(), SERVER + " wrote no server.log this run (eclipse-ee4j/glassfish#25133): the "
            + "adapter's stop and the warnings while it was deployed are checked on Payara");
        assertTrue(LOG.await(logMark, entry -> entry.logger().equals("org.rdmaconnector.ra.RdmaResourceAdapter")
            && entry.text().endsWith("RDMA resource adapter stopped]]"), LOG_WAIT),
            "the adapter logs that it stopped; records in server.log since the rar was deployed: "
                + LOG.since(logMark).size() + "; warnings and errors among them:\n" + LOG.warningsSince(logMark));

        List<ServerLog.Entry> warnings = LOG.since(logMark).stream().filter(ServerLog.Entry::isWarningOrWorse).toList();
        List<ServerLog.Entry> serverOwn = warnings.stream().filter(GlassFishIT::isServerOwn).toList();
        // expected on a host without a device: each listener warns once that it waits (operators should see it)
        List<ServerLog.Entry> waiting = warnings.stream().filter(GlassFishIT::isListenerWaiting).toList();
        Map<String, Integer> listeners = new TreeMap<>();
        waiting.forEach(e -> listeners.merge(e.text().replaceAll("(?s).*RDMA listener on (\\S+) for \\[.*", "$1"), 1,
            Integer::sum));
        assertEquals(WAITING_WARNINGS, listeners, "each listener warns once per start that it waits for its device:\n"
            + ServerLog.describe(waiting));
        List<ServerLog.Entry> counted = warnings.stream().filter(e -> !isServerOwn(e) && !isListenerWaiting(e)
            && !isRefusedConfiguredActivation(e)).toList();
        if (!serverOwn.isEmpty()) {
            System.out.println(SERVER + "'s own warnings while the rar was deployed (not counted):\n"
                + ServerLog.describe(serverOwn));
        }
        assertTrue(counted.isEmpty(), counted.size() + " WARNING/SEVERE record(s) while the rar was deployed ("
            + counted.stream().filter(ServerLog.Entry::isOurs).count() + " logged by or naming org.rdmaconnector):\n"
            + ServerLog.describe(counted));
    }

    private static boolean isListenerWaiting(ServerLog.Entry entry) {
        return entry.logger().equals("org.rdmaconnector.connector.spi.Listener")
            && entry.text().contains("is waiting for its device: rdma_create_event_channel failed: ");
    }

    /** Where the server does not substitute, step 6's deployment is refused: expected, and checked there. */
    private static boolean isRefusedConfiguredActivation(ServerLog.Entry entry) {
        return EXPECTED_REFUSAL.contains(entry.text());
    }

    private static boolean isServerOwn(ServerLog.Entry entry) {
        return SERVER_OWN.stream().anyMatch(p -> p.matcher(entry.text()).find());
    }

    /**
     * The server's OSGi modules that export a package: GlassFish's API class loader imports every exported package
     * dynamically, so applications (and resource adapters, which delegate to it first) see them.
     */
    static List<String> serverModulesExporting(String pkg) {
        List<String> found = new ArrayList<>();
        try (DirectoryStream<Path> jars = Files.newDirectoryStream(HOME.resolve("glassfish/modules"), "*.jar")) {
            for (Path jar : jars) {
                try (JarFile file = new JarFile(jar.toFile())) {
                    Manifest manifest = file.getManifest();
                    String exports = manifest == null ? null : manifest.getMainAttributes().getValue("Export-Package");
                    for (String clause : exports == null ? List.<String>of() : clauses(exports)) {
                        if (clause.equals(pkg) || clause.startsWith(pkg + ";")) {
                            found.add(jar.getFileName() + " (" + manifest.getMainAttributes().getValue(
                                "Bundle-SymbolicName") + "): " + clause.replaceAll(";uses:=\"[^\"]*\"", ""));
                        }
                    }
                }
            }
        } catch (IOException e) {
            found.add("(cannot read " + HOME.resolve("glassfish/modules") + ": " + e + ")");
        }
        return found;
    }

    /** The clauses of an OSGi header: split at commas outside quotes. */
    private static List<String> clauses(String header) {
        List<String> clauses = new ArrayList<>();
        StringBuilder clause = new StringBuilder();
        boolean quoted = false;
        for (char c : header.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
            }
            if (c == ',' && !quoted) {
                clauses.add(clause.toString().strip());
                clause.setLength(0);
            } else {
                clause.append(c);
            }
        }
        clauses.add(clause.toString().strip());
        return clauses;
    }
}
