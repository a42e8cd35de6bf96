package org.rdmaconnector.it.liberty;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.rdmaconnector.it.checks.ReadmeBlock;
import org.rdmaconnector.it.checks.ServerLog;
import org.rdmaconnector.it.checks.StatusPage;

/**
 * The real rdma-connector.rar and rdma-it-app.war in a managed Open Liberty on a host without an RDMA device,
 * configured by the README's server.xml as written: it is dropped into the running server's
 * {@code configDropins/overrides} (Liberty applies configuration changes at run time), which installs the features,
 * the resource adapter, its connection factory and activation specs and the application; then, over HTTP, the bean
 * has the factory injected, getConnection fails with the adapter's own message and errno, and both MDB activations
 * wait for the device; an activation spec's properties apply where the bean's annotation is silent; removing the
 * file undeploys everything, and the log shows the adapter stopped and no unexpected warning or error.
 *
 * <p>Arquillian starts and stops the server; there is no Arquillian deployment, since the application needs the
 * {@code <classloader classProviderRef>} of its server.xml element. The steps are ordered tests sharing one server;
 * a step whose precondition failed is skipped, not failed.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LibertyIT {
    private static final Path SERVER = Path.of(System.getProperty("liberty.server.dir"));
    private static final Path OVERRIDES = SERVER.resolve("configDropins/overrides");
    /** Where the README's server.xml goes, as written. */
    private static final Path README_CONFIG = OVERRIDES.resolve("rdma-connector.xml");
    private static final int HTTP_PORT = Integer.getInteger("liberty.http.port", 19080);
    private static final Duration CONFIG_WAIT = Duration.ofSeconds(120);
    private static final ServerLog LOG = ServerLog.liberty(SERVER.resolve("logs/messages.log"));

    /** Where the log stood before the README's configuration was added: the window the last step checks. */
    private static long logMark = -1;
    private static boolean deployed;

    @Test
    @Order(1)
    void theReadmesServerXmlInstallsTheRarAndTheApplication() throws Exception {
        String serverXml = ReadmeBlock.text("liberty-server-xml");
        logMark = LOG.mark();
        Files.createDirectories(OVERRIDES);
        Files.writeString(README_CONFIG, serverXml, StandardCharsets.UTF_8);
        deployed = true;
        awaitLog("the resource adapter rdma installed", e -> e.messageId().equals("J2CA7001I")
            && e.text().contains("Resource adapter rdma installed"));
        awaitLog("the adapter's start", e -> e.logger().equals("org.rdmaconnector.ra.RdmaResourceAdapter")
            && e.text().endsWith("RDMA resource adapter started"));
        awaitLog("rdma-it-app started", e -> e.messageId().equals("CWWKZ0001I")
            && e.text().contains("Application rdma-it-app started"));
        for (String bean : StatusPage.APP_BEANS) {
            awaitLog(bean + "'s endpoint activated", e -> e.messageId().equals("J2CA8801I")
                && e.text().contains("activation specification rdma-it-app/" + bean + " and message driven bean "
                + "application rdma-it-app#rdma-it-app.war#" + bean + " is activated"));
        }
    }

    @Test
    @Order(2)
    void theBeanIsInjectedConnectionsFailClearlyAndBothActivationsWaitForTheDevice() throws Exception {
        assumeTrue(deployed, "the README's server.xml was not added");
        StatusPage status = StatusPage.fetch(HTTP_PORT);
        status.assertFactoryInjected();
        // the README's connectionFactory names no deviceName: the first device with port 1 ACTIVE
        status.assertConnectionFailsWithoutDevice("the first device with port 1 ACTIVE");
        status.assertAppActivationsWaitForDevice();
    }

    /**
     * The activation spec's properties element is {@code properties.rdma.<listener's simple name>} (two listener
     * types); properties the bean's annotation sets win over it: a port there is ignored, while a property the
     * annotation does not set (maxConnections) is applied, and refused here for its invalid value. Each variant is
     * the README's block with Completions's element changed, so Liberty sees that element change.
     */
    @Test
    @Order(3)
    void anActivationSpecAppliesWhatTheAnnotationLeavesOpen() throws Exception {
        assumeTrue(deployed, "the README's server.xml was not added");
        String asWritten = ReadmeBlock.text("liberty-server-xml");
        String element = "<properties.rdma.CompletionListener address=\"10.0.0.1\" port=\"7471\"/>";
        assertTrue(asWritten.contains(element), "the README's block has " + element);

        long mark = reconfigure(asWritten.replace(element, element.replace("7471", "7472")));
        awaitLog(mark, "Completions activated again", LibertyIT::isCompletionsActivated);
        awaitLog(mark, "rdma-it-app updated", LibertyIT::isApplicationUpdated);
        StatusPage.fetch(HTTP_PORT).assertWaitsForDevice("Completions", StatusPage.APP_LISTENER);

        mark = reconfigure(asWritten.replace(element, "<properties.rdma.CompletionListener maxConnections=\"0\"/>"));
        awaitLog(mark, "Completions refused for its maxConnections", e -> e.messageId().equals("J2CA8802E")
            && e.text().contains("invalid RDMA activation: MaxConnections must be from 1 to 65535, was 0"));
        // the refusal is logged first when the spec changes and again when the application restarts: wait for the
        // restart, or the next change would race it
        awaitLog(mark, "rdma-it-app updated", LibertyIT::isApplicationUpdated);

        // the application runs without Completions's endpoint now: Liberty activates it without restarting the
        // application, so the configuration update's end is what to wait for
        mark = reconfigure(asWritten);
        awaitLog(mark, "Completions activated again", LibertyIT::isCompletionsActivated);
        awaitLog(mark, "the configuration update", e -> e.messageId().equals("CWWKG0017I"));
        StatusPage.fetch(HTTP_PORT).assertAppActivationsWaitForDevice();
    }

    /**
     * Undeploying as the README says, in three configuration updates: the application (the block without its
     * webApplication element), then the adapter and its resources (only the block's featureManager is left), then
     * the features (the file removed). When connectors-2.1 goes in the same update as the adapter, Liberty 25.0.0.11
     * uninstalls the adapter without calling its stop() (see README).
     */
    @Test
    @Order(4)
    void removingTheApplicationThenTheAdapterThenTheFeaturesUndeploysCleanly() throws Exception {
        assumeTrue(deployed, "the README's server.xml was not added");
        String asWritten = ReadmeBlock.text("liberty-server-xml");
        String withoutApplication = asWritten.replaceAll(
            "(?s)\\n *<!--[^\\n]*-->\\n *<webApplication .*</webApplication>", "");
        assertTrue(!withoutApplication.equals(asWritten) && !withoutApplication.contains("rdma-it-app.war"),
            "the README's block ends with the application's webApplication element (and its comment)");
        String featuresOnly = asWritten.replaceAll("(?s)</featureManager>.*</server>", "</featureManager>\n</server>");
        assertTrue(featuresOnly.contains("<feature>connectors-2.1</feature>") && !featuresOnly.contains("rdma"),
            "the README's block starts with its featureManager: " + featuresOnly);

        long mark = reconfigure(withoutApplication);
        awaitLog(mark, "rdma-it-app stopped", e -> e.messageId().equals("CWWKZ0009I")
            && e.text().contains("The application rdma-it-app has stopped successfully"));
        mark = reconfigure(featuresOnly);
        awaitLog(mark, "the adapter's stop", e -> e.logger().equals("org.rdmaconnector.ra.RdmaResourceAdapter")
            && e.text().endsWith("RDMA resource adapter stopped"));
        awaitLog(mark, "the resource adapter rdma uninstalled", e -> e.messageId().equals("J2CA7009I"));
        List<ServerLog.Entry> whileInstalled = LOG.since(logMark);
        mark = LOG.mark();
        Files.delete(README_CONFIG);
        deployed = false;
        awaitLog(mark, "the features removed", e -> e.messageId().equals("CWWKF0013I")
            && e.text().contains("connectors-2.1"));
        // Liberty's own, while it removes features at run time (e.g. once "CWWKO0227E: The required Executor
        // service is missing." from its TCP channel): shown, not counted; the adapter had stopped before
        List<ServerLog.Entry> libertyOwn = LOG.since(mark).stream().filter(ServerLog.Entry::isWarningOrWorse).toList();
        if (!libertyOwn.isEmpty()) {
            System.out.println("Liberty's own warnings while it removed the features (not counted):\n"
                + ServerLog.describe(libertyOwn));
        }

        List<ServerLog.Entry> counted = whileInstalled.stream().filter(ServerLog.Entry::isWarningOrWorse)
            .filter(e -> !isListenerWaiting(e) && !isStep3sRefusal(e)).toList();
        assertTrue(counted.isEmpty(), counted.size() + " WARNING/ERROR record(s) while the rar was installed ("
            + counted.stream().filter(ServerLog.Entry::isOurs).count() + " logged by or naming org.rdmaconnector):\n"
            + ServerLog.describe(counted));
        List<ServerLog.Entry> waiting = whileInstalled.stream().filter(LibertyIT::isListenerWaiting).toList();
        assertTrue(!waiting.isEmpty() && waiting.stream().allMatch(e -> e.text().contains(
            "RDMA listener on " + StatusPage.APP_LISTENER + " for [")), "only rdma-it-app's listener warns that it "
            + "waits for its device (again each time its activations restart):\n" + ServerLog.describe(waiting));
    }

    /** Writes the configuration file anew; returns the log's mark from before. */
    private static long reconfigure(String serverXml) throws IOException {
        long mark = LOG.mark();
        Files.writeString(README_CONFIG, serverXml, StandardCharsets.UTF_8);
        return mark;
    }

    private static boolean isCompletionsActivated(ServerLog.Entry entry) {
        return entry.messageId().equals("J2CA8801I")
            && entry.text().contains("activation specification rdma-it-app/Completions ");
    }

    /** Liberty restarts the application when an activation spec it uses changes. */
    private static boolean isApplicationUpdated(ServerLog.Entry entry) {
        return entry.messageId().equals("CWWKZ0003I") && entry.text().contains("The application rdma-it-app updated");
    }

    private static boolean isListenerWaiting(ServerLog.Entry entry) {
        return entry.logger().equals("org.rdmaconnector.connector.spi.Listener")
            && entry.text().contains("is waiting for its device: rdma_create_event_channel failed: ");
    }

    private static boolean isStep3sRefusal(ServerLog.Entry entry) {
        return entry.messageId().equals("J2CA8802E") && entry.text().contains("MaxConnections must be from 1");
    }

    private static void awaitLog(String what, Predicate<ServerLog.Entry> wanted) throws IOException,
        InterruptedException {
        awaitLog(logMark, what, wanted);
    }

    private static void awaitLog(long mark, String what, Predicate<ServerLog.Entry> wanted) throws IOException,
        InterruptedException {
        assertTrue(LOG.await(mark, wanted, CONFIG_WAIT), "messages.log shows " + what + " within " + CONFIG_WAIT
            .toSeconds() + " s; warnings and errors since:\n" + LOG.warningsSince(mark));
    }
}
