package org.rdmaconnector.it.felix;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.launch.FrameworkFactory;

/**
 * An embedded Felix with the bundles of the build (SCR, Config Admin, JNA, rdma-native, rdma-osgi) and the probe,
 * listed in {@code felix-rig.properties}. The tests share only JDK types with the bundles, so they talk to the probe
 * ({@code org.rdmaconnector.it.felix.probe.Probe}) and read JMX. {@link #close()} stops the framework and waits.
 */
final class FelixRig implements AutoCloseable {
    static final String NATIVE = "org.rdmaconnector.native";
    static final String OSGI = "org.rdmaconnector.osgi";
    static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final Framework framework;

    private FelixRig(Framework framework) {
        this.framework = framework;
    }

    /** Boots the framework with its storage in {@code storage}, installs and starts every bundle. */
    static FelixRig start(Path storage) throws IOException, BundleException {
        Properties rig = new Properties();
        try (InputStream in = FelixRig.class.getResourceAsStream("/felix-rig.properties")) {
            if (in == null) {
                throw new IllegalStateException("felix-rig.properties is not on the class path");
            }
            rig.load(in);
        }
        List<Path> bundles = new ArrayList<>();
        for (String path : rig.getProperty("bundles").split(java.io.File.pathSeparator)) {
            bundles.add(Path.of(path));
        }
        bundles.add(Path.of(rig.getProperty("probe")));
        for (Path bundle : bundles) {
            if (!Files.isRegularFile(bundle)) {
                throw new IllegalStateException("bundle " + bundle + " is missing: build the reactor first");
            }
        }
        Framework framework = ServiceLoader.load(FrameworkFactory.class).findFirst()
            .orElseThrow(() -> new IllegalStateException("no OSGi framework on the class path"))
            .newFramework(Map.of(
                Constants.FRAMEWORK_STORAGE, storage.toString(),
                Constants.FRAMEWORK_STORAGE_CLEAN, Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT,
                "felix.log.level", "1"));
        framework.init();
        try {
            BundleContext context = framework.getBundleContext();
            List<Bundle> installed = new ArrayList<>();
            for (Path bundle : bundles) {
                installed.add(context.installBundle(bundle.toUri().toString()));
            }
            framework.start();
            for (Bundle bundle : installed) {
                bundle.start();
            }
        } catch (BundleException | RuntimeException e) {
            stop(framework);
            throw e;
        }
        return new FelixRig(framework);
    }

    BundleContext context() {
        return framework.getBundleContext();
    }

    Bundle bundle(String symbolicName) {
        for (Bundle b : context().getBundles()) {
            if (symbolicName.equals(b.getSymbolicName())) {
                return b;
            }
        }
        throw new AssertionError("bundle " + symbolicName + " is not installed");
    }

    /** Runs a probe operation (see the probe's Javadoc). */
    @SuppressWarnings("unchecked")
    Object probe(String operation, Map<String, Object> args) throws Exception {
        ServiceReference<?> reference = await("the probe service", () -> {
            try {
                ServiceReference<?>[] references =
                    context().getServiceReferences(BiFunction.class.getName(), "(rdma.it.probe=true)");
                return references == null ? null : references[0];
            } catch (org.osgi.framework.InvalidSyntaxException e) {
                throw new IllegalStateException(e);
            }
        });
        Object probe = context().getService(reference);
        if (probe == null) {
            throw new IllegalStateException("the probe service went away");
        }
        try {
            return ((BiFunction<String, Map<String, Object>, Object>) probe).apply(operation, args);
        } finally {
            context().ungetService(reference);
        }
    }

    /** Polls {@code probe} until it gives a value (not null), for at most {@link #TIMEOUT}. */
    static <T> T await(String what, Supplier<T> probe) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            T value = probe.get();
            if (value != null) {
                return value;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("timed out after " + TIMEOUT.toSeconds() + " s waiting for " + what);
    }

    @Override
    public void close() throws BundleException {
        stop(framework);
    }

    private static void stop(Framework framework) throws BundleException {
        framework.stop();
        try {
            if (framework.waitForStop(TIMEOUT.toMillis()).getType() == FrameworkEvent.WAIT_TIMEDOUT) {
                throw new AssertionError("the framework did not stop within " + TIMEOUT.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
