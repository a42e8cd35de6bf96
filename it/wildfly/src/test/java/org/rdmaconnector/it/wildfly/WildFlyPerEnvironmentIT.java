package org.rdmaconnector.it.wildfly;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.as.controller.client.ModelControllerClient;
import org.jboss.as.controller.client.helpers.Operations;
import org.jboss.dmr.ModelNode;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.ResourceAdapterArchive;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.rdmaconnector.it.checks.ReadmeBlock;

/**
 * The README's WildFly configuration per environment, run as written against the module's one server: its
 * {@code rdma-site.cli} (system properties and a deployment overlay with its {@code rdma-ironjacamar.xml}) through
 * the real {@code jboss-cli.sh} while the unchanged rar and the test application are deployed (the script redeploys
 * them), then an application with the README's {@code jboss-ejb3.xml} (its {@link Echo} bean beside a JMS bean). The
 * injected factory then uses the device and the pool size the script set, the echo bean listens on the address and
 * port the script set, and the JMS bean is left to the messaging adapter. A property changed afterwards takes effect
 * when the rar is redeployed. Afterwards the server is as before (no overlay, no property of the script or the test).
 */
@ExtendWith(ArquillianExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@RunAsClient
public class WildFlyPerEnvironmentIT {
    private static final String RAR = "config-rar";
    private static final String APP = "config-app";
    private static final String MDB_APP = "config-mdb-app";
    private static final String RAR_NAME = "rdma-connector.rar";
    private static final Duration CLI_TIMEOUT = Duration.ofSeconds(180);
    // "/system-property=NAME:add(value=VALUE)": what the README's script sets
    private static final Pattern SYSTEM_PROPERTY = Pattern.compile(
        "(?m)^/system-property=([^:]+):add\\(value=\"?([^\")]*)\"?\\)\\s*$");

    private static final String MANAGEMENT_HOST = "127.0.0.1";
    private static final int MANAGEMENT_PORT = Integer.getInteger("wildfly.management.port", 10090);
    /** The server's management API (Arquillian offers its own client only while a deployment is deployed). */
    private static ModelControllerClient management;

    /** What the server had before the script: the test removes only what it, or the script, added. */
    private static Set<String> propertiesBefore;
    private static Set<String> overlaysBefore;
    /** NAME to VALUE of the script's {@code /system-property=NAME:add(value=VALUE)} lines. */
    private static Map<String, String> scriptProperties;

    @BeforeAll
    static void connect() throws IOException {
        management = ModelControllerClient.Factory.create("remote+http", MANAGEMENT_HOST, MANAGEMENT_PORT);
    }

    @AfterAll
    static void disconnect() throws IOException {
        management.close();
    }

    @Deployment(name = RAR, order = 1, managed = false, testable = false)
    public static ResourceAdapterArchive rar() {
        return WildFlyIT.rar();
    }

    @Deployment(name = APP, order = 2, managed = false, testable = false)
    public static WebArchive app() {
        return WildFlyIT.app();
    }

    /**
     * The README's {@code jboss-ejb3.xml} as written, with the README's echo bean, a JMS bean and a bean bound by
     * {@code @ResourceAdapter}.
     */
    @Deployment(name = MDB_APP, order = 3, managed = false, testable = false)
    public static WebArchive mdbApp() throws IOException {
        return ShrinkWrap.create(WebArchive.class, "rdma-config.war")
            .addClasses(Echo.class, JmsOrders.class, CmEventsBoundByAnnotation.class)
            .addAsWebInfResource(new StringAsset(ReadmeBlock.text("wildfly-jboss-ejb3-xml")), "jboss-ejb3.xml")
            .setManifest(new StringAsset("Manifest-Version: 1.0\nDependencies: deployment." + RAR_NAME + "\n"));
    }

    @Test
    @Order(1)
    void theReadmeScriptRunsAsWrittenOnADeployedRarAndRedeploysIt(@ArquillianResource Deployer deployer)
        throws Exception {
        propertiesBefore = childNames(address(), "system-property");
        overlaysBefore = childNames(address(), "deployment-overlay");
        deployer.deploy(RAR);
        deployer.deploy(APP);
        List<String> before = WildFlyIT.get("status").lines().toList();
        assertTrue(before.get(1).startsWith("connection-error ENOSYS cannot open RDMA channels on the first device "
            + "with port 1 ACTIVE: "), "the rar's own definition first: " + String.join("\n", before));

        String script = ReadmeBlock.text("wildfly-rdma-site-cli");
        scriptProperties = new LinkedHashMap<>();
        for (Matcher m = SYSTEM_PROPERTY.matcher(script); m.find(); ) {
            scriptProperties.put(m.group(1), m.group(2));
        }
        Path dir = Path.of(System.getProperty("wildfly.base.dir")).resolveSibling("readme-cli");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("rdma-ironjacamar.xml"), ReadmeBlock.text("wildfly-rdma-ironjacamar-xml"));
        Files.writeString(dir.resolve("rdma-site.cli"), script);
        runCli(dir, "rdma-site.cli"); // its --redeploy-affected redeploys the rar, and the app with it

        Set<String> overlays = childNames(address(), "deployment-overlay");
        overlays.removeAll(overlaysBefore);
        assertEquals(1, overlays.size(), "the script adds one deployment overlay: " + overlays);
        deployer.deploy(MDB_APP);
    }

    @Test
    @Order(2)
    void theInjectedFactoryUsesTheDeviceAndPoolSizeTheScriptSet() throws Exception {
        String device = scriptSets("rdma.device");
        int maxPoolSize = Integer.parseInt(scriptSets("rdma.pool.max"));
        List<String> lines = WildFlyIT.get("status").lines().toList();
        assertEquals("injected true", lines.get(0), String.join("\n", lines));
        assertEquals("connection-error ENODEV cannot open RDMA channels on device " + device + ": rdma_get_devices "
            + "failed: ENODEV (19): no RDMA device is present on this machine [device " + device + "]", lines.get(1),
            "getConnection tries the script's device (the rar's own definition takes any)");

        ModelNode adapter = address("deployment", RAR_NAME, "subsystem", "resource-adapters", "ironjacamar",
            "ironjacamar", "resource-adapter", RAR_NAME);
        Set<String> definitions = childNames(adapter, "connection-definitions");
        assertEquals(Set.of("java:/eis/rdma/default"), definitions, "the overlay keeps the JNDI name apps map to");
        ModelNode definition = adapter.clone().add("connection-definitions", "java:/eis/rdma/default");
        int deployed = execute(Operations.createReadAttributeOperation(definition, "max-pool-size")).asInt();
        assertEquals(maxPoolSize, deployed, "the pool's max size in the management model");
        assertNotEquals(16, deployed, "differs from the rar's own ironjacamar.xml (16), so the overlay took effect");
    }

    @Test
    @Order(3)
    void theEchoBeanListensWhereTheScriptSaysAndEachBeanHasItsAdapter() throws Exception {
        String listen = scriptSets("rdma.echo.address") + ":" + scriptSets("rdma.echo.port");
        assertNotEquals("10.0.0.1:7471", listen, "differs from the bean's annotation, so the descriptor took effect");
        List<String> activations = WildFlyIT.get("activations").lines()
            .filter(l -> l.startsWith("activation " + Echo.class.getName() + " ")).toList();
        assertEquals(1, activations.size(), "one activation of the echo bean: " + activations);
        assertTrue(activations.get(0).startsWith("activation " + Echo.class.getName() + " " + listen
            + " WAITING_FOR_DEVICE waiting: rdma_create_event_channel failed: ENODEV (19)"), activations.get(0));

        String annotated = "activation " + CmEventsBoundByAnnotation.class.getName() + " 10.0.0.8:7491 "
            + "WAITING_FOR_DEVICE ";
        assertTrue(WildFlyIT.get("activations").lines().anyMatch(l -> l.startsWith(annotated)),
            "the bean with @ResourceAdapter(\"rdma-connector.rar\") is activated by the rar: " + annotated);

        ModelNode jms = address("deployment", "rdma-config.war", "subsystem", "ejb3", "message-driven-bean",
            JmsOrders.class.getSimpleName());
        assertEquals("jakarta.jms.MessageListener",
            execute(Operations.createReadAttributeOperation(jms, "messaging-type")).asString());
        // deployed at all: bound to the rar, its creation would have failed (WFLYEJB0383); delivery is off on purpose
        assertEquals(false, execute(Operations.createReadAttributeOperation(jms, "delivery-active")).asBoolean(),
            "the JMS bean is deployed, on the server's messaging adapter, with @DeliveryActive(false)");
    }

    @Test
    @Order(4)
    void aChangedPropertyTakesEffectWhenTheRarIsRedeployedAndAnEmptyDeviceMeansTheFirstActiveOne() throws Exception {
        scriptSets("rdma.device");
        assertTrue(!scriptProperties.containsKey("rdma.port"), "the test sets rdma.port itself: " + scriptProperties);
        execute(Operations.createRemoveOperation(address("system-property", "rdma.device")));
        ModelNode port = Operations.createAddOperation(address("system-property", "rdma.port"));
        port.get("value").set("2");
        execute(port);
        execute(Operations.createOperation("redeploy", address("deployment", RAR_NAME)));
        List<String> lines = WildFlyIT.get("status").lines().toList();
        assertTrue(lines.get(1).startsWith("connection-error ENOSYS cannot open RDMA channels on the first device "
            + "with port 2 ACTIVE: ibv_get_device_list failed: ENOSYS (38)"), String.join("\n", lines));
    }

    @Test
    @Order(5)
    void undeployingAndUndoingTheScriptLeavesTheServerAsBefore(@ArquillianResource Deployer deployer)
        throws Exception {
        List<String> failures = new ArrayList<>();
        for (String name : List.of(MDB_APP, APP, RAR)) {
            try {
                deployer.undeploy(name);
            } catch (RuntimeException e) {
                failures.add("undeploy " + name + ": " + e);
            }
        }
        ModelNode root = address();
        if (overlaysBefore != null) {
            Set<String> added = childNames(root, "deployment-overlay");
            added.removeAll(overlaysBefore);
            for (String overlay : added) {
                removeOverlay(overlay, failures);
            }
            assertEquals(overlaysBefore, childNames(root, "deployment-overlay"), "overlays as before");
        }
        if (propertiesBefore != null) {
            Set<String> added = childNames(root, "system-property");
            added.removeAll(propertiesBefore);
            for (String property : added) {
                ModelNode result = management.execute(
                    Operations.createRemoveOperation(address("system-property", property)));
                if (!Operations.isSuccessfulOutcome(result)) {
                    failures.add("remove system property " + property + ": "
                        + Operations.getFailureDescription(result));
                }
            }
            assertEquals(propertiesBefore, childNames(root, "system-property"), "system properties as before");
        }
        assertEquals(List.of(), failures);
    }

    /** The overlay's deployment links and contents, then the overlay. */
    private static void removeOverlay(String overlay, List<String> failures) throws IOException {
        ModelNode address = address("deployment-overlay", overlay);
        List<ModelNode> steps = new ArrayList<>();
        for (String childType : List.of("deployment", "content")) {
            for (String child : childNames(address, childType)) {
                steps.add(Operations.createRemoveOperation(address.clone().add(childType, child)));
            }
        }
        steps.add(Operations.createRemoveOperation(address));
        ModelNode composite = Operations.createCompositeOperation();
        steps.forEach(step -> composite.get("steps").add(step));
        ModelNode result = management.execute(composite);
        if (!Operations.isSuccessfulOutcome(result)) {
            failures.add("remove deployment overlay " + overlay + ": " + Operations.getFailureDescription(result));
        }
    }

    /** The value the README's script gives {@code property}; fails if the script no longer sets it. */
    private static String scriptSets(String property) {
        assertTrue(scriptProperties != null && scriptProperties.containsKey(property),
            "the README's rdma-site.cli sets " + property + ": " + scriptProperties);
        return scriptProperties.get(property);
    }

    /**
     * Runs {@code bin/jboss-cli.sh --connect --file=SCRIPT} of the test server in {@code dir} (the script's relative
     * paths are relative to it), bounded by {@link #CLI_TIMEOUT}; fails with the CLI's output unless it exits 0.
     */
    private static void runCli(Path dir, String script) throws Exception {
        Path jbossHome = Path.of(System.getProperty("jboss.home"));
        Path output = dir.resolve(script + ".out");
        ProcessBuilder builder = new ProcessBuilder(jbossHome.resolve("bin/jboss-cli.sh").toString(), "--connect",
            "--controller=remote+http://" + MANAGEMENT_HOST + ":" + MANAGEMENT_PORT,
            "--file=" + script)
            .directory(dir.toFile()).redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().put("JAVA_OPTS", "-Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1");
        long start = System.nanoTime();
        Process cli = builder.start();
        if (!cli.waitFor(CLI_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            cli.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("jboss-cli.sh --file=" + script + " did not end within " + CLI_TIMEOUT + ":\n"
                + Files.readString(output, StandardCharsets.UTF_8));
        }
        String out = Files.readString(output, StandardCharsets.UTF_8);
        System.out.println("WildFlyPerEnvironmentIT: jboss-cli.sh --file=" + script + " exited " + cli.exitValue()
            + " in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms:\n" + out);
        assertEquals(0, cli.exitValue(), "jboss-cli.sh --file=" + script + ":\n" + out);
    }

    private static Set<String> childNames(ModelNode address, String childType) throws IOException {
        ModelNode op = Operations.createOperation("read-children-names", address);
        op.get("child-type").set(childType);
        Set<String> names = new TreeSet<>();
        execute(op).asList().forEach(n -> names.add(n.asString()));
        return names;
    }

    private static ModelNode execute(ModelNode operation) throws IOException {
        ModelNode result = management.execute(operation);
        assertTrue(Operations.isSuccessfulOutcome(result),
            () -> operation + ": " + Operations.getFailureDescription(result));
        return Operations.readResult(result);
    }

    /** A management address from key, value pairs. */
    private static ModelNode address(String... pairs) {
        ModelNode address = new ModelNode().setEmptyList();
        for (int i = 0; i < pairs.length; i += 2) {
            address.add(pairs[i], pairs[i + 1]);
        }
        return address;
    }
}
