package org.rdmaconnector.it.glassfish;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.ResourceAdapterArchive;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The real rdma-connector.rar and rdma-it-app.war in a managed GlassFish 7 on a host without an RDMA device, as an
 * administrator would do it: deploy the rar (module rdma-connector), add its connection pool and the connector
 * resource eis/rdma/default, deploy the application; then, over HTTP, the bean has the factory injected,
 * getConnection fails with the adapter's own message and errno, and both MDB activations wait for the device; then
 * undeploy everything, and the server log shows the adapter stopped and no warning or error (GlassFish's own
 * warnings that any connector pool gets are listed in {@link #GLASSFISH_OWN} and printed, not counted).
 *
 * <p>The steps are ordered tests sharing one server; a step whose precondition failed is skipped, not failed.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GlassFishIT {
    private static final String RAR = "rar";
    private static final String APP = "app";
    private static final String POOL = "rdma-pool";
    private static final String RESOURCE = "eis/rdma/default";
    private static final Path HOME = Path.of(System.getProperty("glassfish.home"));
    private static final Path DEPLOYMENTS = Path.of(System.getProperty("it.deployments.dir"));
    private static final int ADMIN_PORT = Integer.getInteger("glassfish.admin.port", 14848);
    private static final int HTTP_PORT = Integer.getInteger("glassfish.http.port", 18080);
    private static final Duration LOG_WAIT = Duration.ofSeconds(30);

    /**
     * Warnings GlassFish logs on its own for any connector pool, named here so they are shown but not counted:
     * the first lookup of a pool created after boot (pools are initialized lazily).
     */
    static final List<Pattern> GLASSFISH_OWN = List.of(
        Pattern.compile("^\\s*Probably the pool \\S+\\[jndiName=" + POOL + ", applicationName=null, moduleName=null\\] "
            + "is not yet initialized \\(lazy-loading\\), trying to check \\.\\.\\.\\]\\]$", Pattern.MULTILINE));

    private static final ServerLog LOG = new ServerLog(HOME.resolve("glassfish/domains/domain1/logs/server.log"));
    private static final Asadmin ASADMIN = new Asadmin(HOME, ADMIN_PORT);

    /** Where the log stood before the rar was deployed: the window the last step checks. */
    private static long logMark = -1;
    private static boolean rarDeployed;
    private static boolean resourcesAdded;
    private static boolean appDeployed;

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

    @Test
    @Order(1)
    void theRarDeploysAsRdmaConnectorAndItsAdapterStarts() throws Exception {
        logMark = LOG.mark();
        try {
            deployer.deploy(RAR);
        } catch (Exception e) {
            fail("deploying rdma-connector.rar failed: " + e + "\nserver modules exporting com.sun.jna to every "
                + "application (ahead of the rar's own jna.jar): " + serverModulesExporting("com.sun.jna")
                + "\nserver log since:\n" + warningsSince(logMark), e);
        }
        rarDeployed = true;
        assertTrue(LOG.await(logMark, entry -> entry.logger().equals("org.rdmaconnector.ra.RdmaResourceAdapter")
            && entry.text().endsWith("RDMA resource adapter started]]"), LOG_WAIT),
            "the adapter logs its start; records in server.log since the deploy began: " + LOG.since(logMark).size());
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
            fail("deploying rdma-it-app.war failed: " + e + "\nserver log since:\n" + warningsSince(mark), e);
        }
        appDeployed = true;
    }

    @Test
    @Order(4)
    void theBeanIsInjectedConnectionsFailClearlyAndBothActivationsWaitForTheDevice() throws Exception {
        assumeTrue(appDeployed, "rdma-it-app is not deployed");
        HttpResponse<String> response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build().send(
            HttpRequest.newBuilder(URI.create("http://localhost:" + HTTP_PORT + "/rdma-it-app/rdma/status"))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        String body = response.body();
        System.out.println("GET /rdma-it-app/rdma/status -> " + response.statusCode() + "\n" + body);
        assertEquals(200, response.statusCode(), body);
        List<String> lines = body.lines().toList();

        assertTrue(lines.contains("injected true"), body);

        // The RdmaException of the one factory type (RdmaConnectionFactory, as in OSGi): errnoName() the errno's
        // name, message naming the device and the failed call with the same errno. No device name is
        // configured, so it is the first device with port 1 ACTIVE. This host has no RDMA in the kernel: ENOSYS
        // from ibv_get_device_list; a kernel with RDMA but no device answers ENODEV.
        String connection = lines.stream().filter(l -> l.startsWith("connection")).findFirst().orElse("(none)");
        Matcher error = Pattern.compile("^connection-error (ENOSYS|ENODEV) cannot open RDMA channels on the first "
            + "device with port 1 ACTIVE: \\w+ failed: (\\w+) \\((\\d+)\\): .+").matcher(connection);
        assertTrue(error.matches(), "getConnection fails with the adapter's message and errno; got: " + connection);
        assertEquals(error.group(1), error.group(2), "errnoName() is the errno the message names: " + connection);

        // One activation per MDB, both on the listener of their activation config, waiting with the errno named.
        List<String> activations = lines.stream().filter(l -> l.startsWith("activation ")).toList();
        assertEquals(2, activations.size(), body);
        for (String bean : List.of("CmEvents", "Completions")) {
            String line = activations.stream().filter(l -> l.split(" ")[1].endsWith("org.rdmaconnector.it.app." + bean))
                .findFirst().orElseThrow(() -> new AssertionError("no activation of " + bean + " in\n" + body));
            Matcher waiting = Pattern.compile("^activation \\S+ 10\\.0\\.0\\.1:7471 WAITING_FOR_DEVICE "
                + "waiting: rdma_create_event_channel failed: (E[A-Z]+) \\((\\d+)\\): .+").matcher(line);
            assertTrue(waiting.matches(), bean + " waits for the device with the errno named; got: " + line);
        }
    }

    @Test
    @Order(5)
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
        assertTrue(LOG.await(logMark, entry -> entry.logger().equals("org.rdmaconnector.ra.RdmaResourceAdapter")
            && entry.text().endsWith("RDMA resource adapter stopped]]"), LOG_WAIT),
            "the adapter logs that it stopped; records in server.log since the rar was deployed: "
                + LOG.since(logMark).size() + "; warnings and errors among them:\n" + warningsSince(logMark));
        Asadmin.Result applications = ASADMIN.run("list-applications");
        assertTrue(applications.output().contains("Nothing to list."), applications.toString());

        List<ServerLog.Entry> warnings = LOG.since(logMark).stream().filter(ServerLog.Entry::isWarningOrWorse).toList();
        List<ServerLog.Entry> glassfishOwn = warnings.stream().filter(GlassFishIT::isGlassFishOwn).toList();
        // expected on a host without a device: each listener warns once that it waits (operators should see it)
        List<ServerLog.Entry> waiting = warnings.stream().filter(GlassFishIT::isListenerWaiting).toList();
        assertEquals(1, waiting.size(), "one listener, one 'waiting for its device' warning:\n" + describe(waiting));
        List<ServerLog.Entry> counted = warnings.stream().filter(e -> !isGlassFishOwn(e) && !isListenerWaiting(e))
            .toList();
        if (!glassfishOwn.isEmpty()) {
            System.out.println("GlassFish's own warnings while the rar was deployed (not counted):\n"
                + describe(glassfishOwn));
        }
        assertTrue(counted.isEmpty(), counted.size() + " WARNING/SEVERE record(s) while the rar was deployed ("
            + counted.stream().filter(GlassFishIT::isOurs).count() + " logged by or naming org.rdmaconnector):\n"
            + describe(counted));
    }

    private static boolean isListenerWaiting(ServerLog.Entry entry) {
        return entry.logger().equals("org.rdmaconnector.connector.spi.Listener")
            && entry.text().contains("RDMA listener on 10.0.0.1:7471 for [")
            && entry.text().contains("is waiting for its device: rdma_create_event_channel failed: ");
    }

    private static boolean isGlassFishOwn(ServerLog.Entry entry) {
        return !isOurs(entry) && GLASSFISH_OWN.stream().anyMatch(p -> p.matcher(entry.text()).find());
    }

    private static boolean isOurs(ServerLog.Entry entry) {
        return entry.logger().startsWith("org.rdmaconnector") || entry.text().contains("org.rdmaconnector");
    }

    private static String warningsSince(long mark) {
        try {
            return describe(LOG.since(mark).stream().filter(ServerLog.Entry::isWarningOrWorse).toList());
        } catch (Exception e) {
            return "(cannot read the server log: " + e + ")";
        }
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

    private static String describe(List<ServerLog.Entry> entries) {
        return entries.stream().map(e -> e.summary(40)).collect(Collectors.joining("\n\n"));
    }
}
