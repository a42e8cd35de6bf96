package org.rdmaconnector.it.karaf;

import static org.ops4j.pax.exam.CoreOptions.systemProperty;
import static org.ops4j.pax.exam.CoreOptions.vmOptions;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.configureConsole;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.editConfigurationFilePut;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.karafDistributionConfiguration;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.keepRuntimeFolder;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.logLevel;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivilegedActionException;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.function.Supplier;

import javax.inject.Inject;
import javax.security.auth.Subject;

import org.apache.karaf.features.BootFinished;
import org.apache.karaf.features.Feature;
import org.apache.karaf.features.FeaturesService;
import org.apache.karaf.jaas.boot.principal.RolePrincipal;
import org.apache.karaf.jaas.boot.principal.UserPrincipal;
import org.junit.Before;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.karaf.options.LogLevelOption.LogLevel;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerSuite;
import org.ops4j.pax.exam.util.Filter;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;

/**
 * Base of the Karaf tests: one Karaf 4.4 for all test classes of the module ({@link PerSuite}), offline, fed from the
 * KAR this build made (installed by the README's own steps) and, for Pax Exam's bundles, the local Maven repository;
 * helpers to run shell commands and to install the feature.
 *
 * <p>{@link #config()} runs in the test JVM (Maven's system properties are there); everything else runs inside Karaf,
 * in the probe bundle, which imports packages dynamically ({@code DynamicImport-Package: *}). Two rules follow:
 * <ul>
 * <li>Fields and method signatures name only Karaf, OSGi and JDK types: JUnit reflects on them before the feature is
 * installed, when rdma-native is not there yet. Call rdma-native in method bodies only.</li>
 * <li>The probe never loads a class of the shell (commands run by reflection, services are looked up with
 * {@code getAllServiceReferences}): a feature install without {@code -r} that brings JNA refreshes the shell, and a
 * probe wired to it would be refreshed too, in the middle of a test.</li>
 * </ul>
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerSuite.class)
public abstract class KarafTestSupport {

    /** The feature repository's Maven URL, as a user types it; set by the build. */
    static final String FEATURE_REPOSITORY = System.getProperty("rdma.feature.repository",
            "mvn:org.rdmaconnector/rdma-karaf/0.1.0-SNAPSHOT/xml/features");
    static final String FEATURE = "rdma-connector";
    static final String NATIVE_BUNDLE = "org.rdmaconnector.native";
    static final String JNA_BUNDLE = "com.sun.jna";
    /** The KAR this build made (karaf/target); set by the build. */
    static final String KAR = System.getProperty("rdma.kar");
    /** The README, whose Karaf steps install the feature; set by the build. */
    static final String README = System.getProperty("rdma.readme");
    /** The checkout the README's steps are run from: it stands for {@link #CHECKOUT_PLACEHOLDER}; set by the build. */
    static final String CHECKOUT = System.getProperty("rdma.checkout");
    /** How the README's steps write the checkout's path, for users to replace with theirs. */
    static final String CHECKOUT_PLACEHOLDER = "/path/to/rdma-connector";
    private static final String STEPS_BEGIN = "<!-- karaf-steps";
    private static final String STEPS_END = "<!-- /karaf-steps -->";

    private static final long COMMAND_TIMEOUT_SECONDS = 120;
    private static final String SESSION_FACTORY = "org.apache.karaf.shell.api.console.SessionFactory";
    private static final String SESSION = "org.apache.karaf.shell.api.console.Session";
    private static final String REGISTRY = "org.apache.karaf.shell.api.console.Registry";
    private static final String COMPLETER = "org.apache.karaf.shell.api.console.Completer";
    private static final String COMMAND_LINE = "org.apache.karaf.shell.api.console.CommandLine";
    private static final String COMMAND_LINE_IMPL = "org.apache.karaf.shell.support.parsing.CommandLineImpl";
    static final String OSGI_BUNDLE = "org.rdmaconnector.osgi";

    /**
     * Karaf registers it when the boot features are installed. Pax Exam starts the tests as soon as its probe runs,
     * which can be earlier: commands are then missing ("Command not found: feature:repo-add") or a session is
     * interrupted by a refresh of the shell bundles. Injecting it makes every test wait.
     */
    @Inject
    @Filter(timeout = 180_000)
    protected BootFinished bootFinished;

    @Inject
    protected BundleContext bundleContext;

    @Inject
    protected FeaturesService featuresService;

    @Configuration
    public Option[] config() {
        List<Option> options = new ArrayList<>(List.of(
                karafDistributionConfiguration()
                        .frameworkUrl(new File(required("karaf.distribution")).toURI().toString())
                        .name("Apache Karaf")
                        .karafVersion(required("karaf.version"))
                        .unpackDirectory(new File(required("karaf.exam.dir")))
                        .useDeployFolder(false),
                keepRuntimeFolder(),
                // no local console (no terminal), no ssh port: the tests reach the shell through SessionFactory
                configureConsole().ignoreLocalConsole().ignoreRemoteShell(),
                logLevel(LogLevel.INFO),
                // pax-url offline: Karaf's system folder and the installed KARs (as in a fresh Karaf), then the
                // local repository (for Pax Exam's own bundles); no remote repository at all: the rdma bundles and JNA
                // can only come from the KAR
                editConfigurationFilePut("etc/org.ops4j.pax.url.mvn.cfg", "org.ops4j.pax.url.mvn.offline", "true"),
                editConfigurationFilePut("etc/org.ops4j.pax.url.mvn.cfg", "org.ops4j.pax.url.mvn.repositories", ""),
                editConfigurationFilePut("etc/org.ops4j.pax.url.mvn.cfg", "org.ops4j.pax.url.mvn.localRepository",
                        required("karaf.local.repository")),
                editConfigurationFilePut("etc/org.ops4j.pax.url.mvn.cfg", "org.ops4j.pax.url.mvn.defaultRepositories",
                        "${karaf.home.uri}${karaf.default.repository}@id=system.repository@snapshots,"
                                + "${karaf.data.uri}kar@id=kar.repository@multi@snapshots"),
                // read inside Karaf, where Maven's system properties are not
                systemProperty("rdma.feature.repository").value(FEATURE_REPOSITORY),
                systemProperty("rdma.kar").value(required("rdma.kar")),
                systemProperty("rdma.readme").value(required("rdma.readme")),
                systemProperty("rdma.checkout").value(required("rdma.checkout"))));
        List<String> vm = new ArrayList<>(
                Arrays.asList(System.getProperty("karaf.jvm.args", "-Xmx256m").trim().split("\\s+")));
        // what bin/karaf passes on JDK 9+ and Pax Exam's own launcher does not (the patch-module paths are relative to
        // the Karaf home, the working directory of the Karaf JVM)
        vm.addAll(List.of(
                "--add-reads=java.xml=java.logging",
                "--add-exports=java.base/org.apache.karaf.specs.locator=java.xml,ALL-UNNAMED",
                "--patch-module", "java.base=lib/endorsed/org.apache.karaf.specs.locator-" + required("karaf.version") + ".jar",
                "--patch-module", "java.xml=lib/endorsed/org.apache.karaf.specs.java.xml-" + required("karaf.version") + ".jar",
                "--add-opens", "java.base/java.security=ALL-UNNAMED",
                "--add-opens", "java.base/java.net=ALL-UNNAMED",
                "--add-opens", "java.base/java.lang=ALL-UNNAMED",
                "--add-opens", "java.base/java.util=ALL-UNNAMED",
                "--add-opens", "java.naming/javax.naming.spi=ALL-UNNAMED",
                "--add-opens", "java.rmi/sun.rmi.transport.tcp=ALL-UNNAMED",
                "--add-exports=java.base/sun.net.www.protocol.file=ALL-UNNAMED",
                "--add-exports=java.base/sun.net.www.protocol.ftp=ALL-UNNAMED",
                "--add-exports=java.base/sun.net.www.protocol.http=ALL-UNNAMED",
                "--add-exports=java.base/sun.net.www.protocol.https=ALL-UNNAMED",
                "--add-exports=java.base/sun.net.www.protocol.jar=ALL-UNNAMED",
                "--add-exports=java.base/sun.net.www.content.text=ALL-UNNAMED",
                "--add-exports=jdk.xml.dom/org.w3c.dom.html=ALL-UNNAMED",
                "--add-exports=jdk.naming.rmi/com.sun.jndi.url.rmi=ALL-UNNAMED",
                "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
                "--add-exports=java.security.sasl/com.sun.security.sasl=ALL-UNNAMED",
                "--add-exports=java.naming/com.sun.jndi.ldap=ALL-UNNAMED"));
        options.add(vmOptions(vm.toArray(new String[0])));
        return options.toArray(new Option[0]);
    }

    private static String required(String name) {
        String value = System.getProperty(name);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("system property " + name + " is not set: run the tests through Maven (mvn verify)");
        }
        return value;
    }

    /**
     * Runs {@code commandLine} in a new Karaf shell session as the user {@code karaf} (roles admin, manager, viewer, as
     * in etc/users.properties) and returns what it printed (standard output and error). Fails if the command throws
     * (Karaf reports unknown commands and bad options that way) or takes too long.
     */
    protected String executeCommand(String commandLine) throws Exception {
        return executeCommand(commandLine, "admin", "manager", "viewer");
    }

    /**
     * Runs {@code commandLine} as a user with only these roles. Karaf's command ACLs (etc/org.apache.karaf.command.acl.*)
     * hide what the roles may not run: such a command fails with "Command not found". Without a Subject every command
     * guarded by an ACL is hidden.
     */
    protected String executeCommand(String commandLine, String... roles) throws Exception {
        Subject subject = new Subject();
        subject.getPrincipals().add(new UserPrincipal("karaf"));
        for (String role : roles) {
            subject.getPrincipals().add(new RolePrincipal(role));
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        // A fresh SessionFactory for every command, called through its interface by reflection. A feature:install
        // without -r that brings JNA refreshes the shell bundles (see feature.xml). A probe that had loaded a class of
        // the shell API would be wired to them through its DynamicImport-Package and refreshed with them, which ends
        // the running test ("Invalid BundleContext"); a SessionFactory from before the refresh knows no command.
        ServiceReference<?> reference = awaitService(SESSION_FACTORY);
        Object sessionFactory = bundleContext.getService(reference);
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try {
            Class<?> factoryType = reference.getBundle().loadClass(SESSION_FACTORY);
            Class<?> sessionType = reference.getBundle().loadClass(SESSION);
            Object session = factoryType
                    .getMethod("create", InputStream.class, PrintStream.class, PrintStream.class)
                    .invoke(sessionFactory, System.in, out, out);
            Method execute = sessionType.getMethod("execute", CharSequence.class);
            Future<Object> result = executor.submit(() -> Subject.doAs(subject,
                    (PrivilegedExceptionAction<Object>) () -> execute.invoke(session, commandLine)));
            try {
                Object value = result.get(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                if (value != null) {
                    // a Gogo function (scr:list, ...) returns its result, which the console would print
                    out.println(value);
                }
            } catch (ExecutionException e) {
                throw new CommandFailedException(commandLine, bytes.toString(StandardCharsets.UTF_8), rootOf(e));
            } catch (TimeoutException e) {
                result.cancel(true);
                throw new AssertionError("'" + commandLine + "' did not finish in " + COMMAND_TIMEOUT_SECONDS
                        + " s; it printed:\n" + bytes.toString(StandardCharsets.UTF_8));
            } finally {
                sessionType.getMethod("close").invoke(session);
            }
        } finally {
            executor.shutdownNow();
            bundleContext.ungetService(reference);
        }
        out.flush();
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /**
     * The candidates the console offers after {@code command} and a space (the next word empty), from the rdma-osgi
     * completer {@code completerClass}: the instance Karaf registered in the shell (with its references injected), found
     * through a session's registry and called by reflection, as the console calls it on TAB.
     */
    protected List<String> completionCandidates(String command, String completerClass) throws Exception {
        ServiceReference<?> reference = awaitService(SESSION_FACTORY);
        Object sessionFactory = bundleContext.getService(reference);
        try {
            Bundle shell = reference.getBundle();
            Class<?> sessionType = shell.loadClass(SESSION);
            Object session = shell.loadClass(SESSION_FACTORY)
                    .getMethod("create", InputStream.class, PrintStream.class, PrintStream.class)
                    .invoke(sessionFactory, System.in, System.out, System.err);
            try {
                Object registry = sessionType.getMethod("getRegistry").invoke(session);
                Class<?> type = bundle(OSGI_BUNDLE).loadClass(completerClass);
                Object completer = await(completerClass + " in the shell's registry", () -> {
                    try {
                        return shell.loadClass(REGISTRY).getMethod("getService", Class.class).invoke(registry, type);
                    } catch (ReflectiveOperationException e) {
                        throw new IllegalStateException(e);
                    }
                });
                String buffer = command + " ";
                Object commandLine = shell.loadClass(COMMAND_LINE_IMPL)
                        .getConstructor(String[].class, int.class, int.class, int.class, String.class)
                        .newInstance(new String[] {command, ""}, 1, 0, buffer.length(), buffer);
                List<String> candidates = new ArrayList<>();
                shell.loadClass(COMPLETER).getMethod("complete", sessionType, shell.loadClass(COMMAND_LINE), List.class)
                        .invoke(completer, session, commandLine, candidates);
                List<String> trimmed = new ArrayList<>();
                candidates.forEach(candidate -> trimmed.add(candidate.trim()));
                return trimmed;
            } finally {
                sessionType.getMethod("close").invoke(session);
            }
        } finally {
            bundleContext.ungetService(reference);
        }
    }

    /** What a command threw, without the wrappers of the executor, doAs and reflection. */
    private static Throwable rootOf(Throwable thrown) {
        Throwable cause = thrown;
        while ((cause instanceof ExecutionException || cause instanceof PrivilegedActionException
                || cause instanceof InvocationTargetException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    /**
     * A shell command that threw: what it printed and why. The cause is kept as text: its class (a Gogo or Karaf
     * exception) exists only inside Karaf, and Pax Exam sends failures to the test JVM serialized.
     */
    protected static final class CommandFailedException extends AssertionError {
        private static final long serialVersionUID = 1L;

        private final String causeType;

        CommandFailedException(String commandLine, String printed, Throwable cause) {
            super("'" + commandLine + "' failed: " + cause + "\nit printed:\n" + printed + "\n" + stackTrace(cause));
            this.causeType = cause.getClass().getName();
        }

        /** The class name of what the command threw. */
        public String causeType() {
            return causeType;
        }

        private static String stackTrace(Throwable cause) {
            StringWriter text = new StringWriter();
            cause.printStackTrace(new PrintWriter(text));
            return text.toString();
        }
    }

    /** What the README's Karaf steps printed, each after its line; null until the first test ran them. */
    private static String readmeStepsOutput;

    /** Every test starts with the feature installed; the first one, in the fresh Karaf, installs it. */
    @Before
    public void installFeature() throws Exception {
        installRdmaFeature();
    }

    /**
     * What a new user does after the README's two commands: the README's Karaf steps, as written between its
     * {@code karaf-steps} markers (install the KAR this build made, install the feature, a first command), run in the
     * shell once per Karaf, in the fresh Karaf of the first test; later calls return what they printed then.
     * The steps use {@code feature:install -r}, so the shell is not refreshed (see feature.xml); a step fails the test
     * as soon as it fails, except "Command not found" for a command whose bundle is still starting, which is retried
     * until the deadline.
     */
    protected String installRdmaFeature() throws Exception {
        synchronized (KarafTestSupport.class) {
            if (readmeStepsOutput == null) {
                StringBuilder printed = new StringBuilder();
                for (String step : readmeKarafSteps()) {
                    printed.append(step).append('\n').append(executeStep(step));
                }
                awaitFeatureInstalled();
                readmeStepsOutput = printed.toString();
            }
            return readmeStepsOutput;
        }
    }

    /**
     * The README's Karaf steps: the lines between its markers, without indentation, blank lines and marker comments,
     * {@link #CHECKOUT_PLACEHOLDER} replaced by this checkout's path. Fails when there are none.
     */
    static List<String> readmeKarafSteps() throws IOException {
        List<String> lines = Files.readAllLines(Path.of(README), StandardCharsets.UTF_8);
        List<String> steps = new ArrayList<>();
        boolean inside = false;
        for (String line : lines) {
            if (line.startsWith(STEPS_BEGIN)) {
                inside = true;
            } else if (line.startsWith(STEPS_END)) {
                inside = false;
            } else if (inside && !line.isBlank()) {
                steps.add(line.trim().replace(CHECKOUT_PLACEHOLDER, Path.of(CHECKOUT).normalize().toString()));
            }
        }
        if (steps.isEmpty() || inside) {
            throw new AssertionError(README + " has no Karaf steps between '" + STEPS_BEGIN + "' and '" + STEPS_END
                    + "' lines");
        }
        return steps;
    }

    /** Runs one step as a user types it; "Command not found" (its bundle still starting) is retried to a deadline. */
    private String executeStep(String step) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(COMMAND_TIMEOUT_SECONDS);
        while (true) {
            try {
                return executeCommand(step);
            } catch (CommandFailedException e) {
                if (!e.getMessage().contains("Command not found") || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    private void awaitFeatureInstalled() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(COMMAND_TIMEOUT_SECONDS);
        while (true) {
            Feature feature = featuresService.getFeature(FEATURE);
            if (feature != null && featuresService.isInstalled(feature)) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(FEATURE + " was not installed after " + COMMAND_TIMEOUT_SECONDS + " s");
            }
            Thread.sleep(100);
        }
    }

    /**
     * Runs {@code commandLine} until what it prints satisfies {@code done}, and returns that output. A command is
     * registered when its bundle's component starts, which can be after the feature is installed and after other
     * commands answer: "Command not found" is retried like any other not-yet answer, until a deadline (never a count
     * of tries). The failure names the command, the wait and the last output or error.
     */
    protected String awaitCommand(String commandLine, String what, Predicate<String> done) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(COMMAND_TIMEOUT_SECONDS);
        String last = "";
        Throwable failure = null;
        while (true) {
            try {
                last = executeCommand(commandLine);
                failure = null;
                if (done.test(last)) {
                    return last;
                }
            } catch (CommandFailedException e) {
                failure = e;
            }
            if (System.nanoTime() > deadline) {
                AssertionError timeout = new AssertionError("'" + commandLine + "' did not show " + what + " within "
                        + COMMAND_TIMEOUT_SECONDS + " s; it last printed:\n" + last);
                if (failure != null) {
                    timeout.initCause(failure);
                }
                throw timeout;
            }
            Thread.sleep(100);
        }
    }

    /** Polls {@code probe} every 100 ms until it gives a value, for at most {@link #COMMAND_TIMEOUT_SECONDS}. */
    protected static <T> T await(String what, Supplier<T> probe) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(COMMAND_TIMEOUT_SECONDS);
        while (true) {
            T value = probe.get();
            if (value != null) {
                return value;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + COMMAND_TIMEOUT_SECONDS + " s waiting for " + what);
            }
            Thread.sleep(100);
        }
    }

    private ServiceReference<?> awaitService(String type) throws InterruptedException, InvalidSyntaxException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(COMMAND_TIMEOUT_SECONDS);
        while (true) {
            // getAllServiceReferences, not getServiceReference: the latter checks that the probe sees the service's
            // package from the same source, and Felix resolves the probe's DynamicImport-Package for that check,
            // which wires the probe to the shell (see executeCommand)
            ServiceReference<?>[] references = bundleContext.getAllServiceReferences(type, null);
            if (references != null && references.length > 0) {
                return references[0];
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no " + type + " service after " + COMMAND_TIMEOUT_SECONDS + " s");
            }
            Thread.sleep(100);
        }
    }

    /** The bundle with this symbolic name once it is ACTIVE; fails after the deadline naming its last state. */
    protected Bundle awaitActive(String symbolicName) throws InterruptedException {
        return await(symbolicName + " ACTIVE", () -> {
            Bundle b = bundle(symbolicName);
            return b != null && b.getState() == Bundle.ACTIVE ? b : null;
        });
    }

    /** The bundle with this symbolic name, or null. */
    protected Bundle bundle(String symbolicName) {
        for (Bundle bundle : bundleContext.getBundles()) {
            if (symbolicName.equals(bundle.getSymbolicName())) {
                return bundle;
            }
        }
        return null;
    }

    static String stateName(int state) {
        switch (state) {
            case Bundle.UNINSTALLED: return "UNINSTALLED";
            case Bundle.INSTALLED: return "INSTALLED";
            case Bundle.RESOLVED: return "RESOLVED";
            case Bundle.STARTING: return "STARTING";
            case Bundle.STOPPING: return "STOPPING";
            case Bundle.ACTIVE: return "ACTIVE";
            default: return "state " + state;
        }
    }
}
