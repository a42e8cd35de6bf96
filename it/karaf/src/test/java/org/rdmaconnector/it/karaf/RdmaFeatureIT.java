package org.rdmaconnector.it.karaf;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.util.List;
import java.util.jar.JarFile;
import org.apache.karaf.features.Feature;
import org.apache.karaf.features.Repository;
import org.junit.Test;
import org.osgi.framework.Bundle;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.wiring.BundleRevision;
import org.osgi.framework.wiring.BundleWire;
import org.osgi.framework.wiring.BundleWiring;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.Rdma;

/**
 * The rdma-connector feature in Karaf: it installs from its Maven URL, rdma-native runs, and calling into it from
 * another bundle (this probe) reaches rdma-core through JNA. The host has no RDMA device, so the native calls end in
 * the clear error the host gives.
 */
public class RdmaFeatureIT extends KarafTestSupport {

    @Test
    public void theFeatureRepositoryIsRegisteredUnderItsMavenUrl() throws Exception {
        // the KAR registered it under its Maven URL; adding it by that URL, as users of a Maven repository do, is
        // then harmless
        executeCommand("feature:repo-add " + FEATURE_REPOSITORY);

        Repository repository = null;
        for (Repository candidate : featuresService.listRepositories()) {
            if (candidate.getURI().toString().equals(FEATURE_REPOSITORY)) {
                repository = candidate;
            }
        }
        assertNotNull("no repository registered under " + FEATURE_REPOSITORY, repository);
        Feature feature = featuresService.getFeature(FEATURE);
        assertNotNull("no feature " + FEATURE, feature);
        assertTrue(FEATURE + " is not installed", featuresService.isInstalled(feature));
        for (String required : List.of("scr", "config")) {
            assertTrue(required + " (a dependency of " + FEATURE + ") is not installed",
                    featuresService.isInstalled(featuresService.getFeature(required)));
        }
        String installed = executeCommand("feature:list -i");
        assertTrue(installed, installed.contains(FEATURE));
    }

    @Test
    public void rdmaNativeIsActiveAndWiredToJna() throws Exception {
        assertNotNull("bundle " + NATIVE_BUNDLE + " is not installed", bundle(NATIVE_BUNDLE));
        assertNotNull("bundle " + JNA_BUNDLE + " is not installed", bundle(JNA_BUNDLE));
        // a refresh after the feature's first install may still be restarting them
        Bundle rdmaNative = awaitActive(NATIVE_BUNDLE);
        awaitActive(JNA_BUNDLE);

        // com.sun.jna comes from the JNA bundle, not from the system bundle or a copy
        BundleWiring wiring = rdmaNative.adapt(BundleWiring.class);
        boolean jnaWired = false;
        for (BundleWire wire : wiring.getRequiredWires(BundleRevision.PACKAGE_NAMESPACE)) {
            if ("com.sun.jna".equals(wire.getCapability().getAttributes().get(BundleRevision.PACKAGE_NAMESPACE))) {
                assertEquals("com.sun.jna wired to", JNA_BUNDLE, wire.getProvider().getSymbolicName());
                jnaWired = true;
            }
        }
        assertTrue(NATIVE_BUNDLE + " has no wire for com.sun.jna", jnaWired);
        // Karaf boot-delegates com.sun.* (etc/config.properties): JNA on the JVM's class path would win over the wire
        assertEquals("com.sun.jna.Native as rdma-native loads it comes from", JNA_BUNDLE,
                FrameworkUtil.getBundle(rdmaNative.loadClass("com.sun.jna.Native")).getSymbolicName());
    }

    @Test
    public void theBundlesKarafRunsAreTheKarsOwn() throws Exception {
        // not an older SNAPSHOT from the local repository (bnd's qualifier is the build time to the minute): the
        // Bundle-Version Karaf runs is that of the jar inside the KAR the README's steps installed
        try (JarFile kar = new JarFile(new File(KAR))) {
            for (String artifact : List.of("rdma-native", "rdma-osgi")) {
                Bundle running = bundle("rdma-native".equals(artifact) ? NATIVE_BUNDLE : OSGI_BUNDLE);
                var jar = kar.stream().filter(e -> e.getName().matches("repository/org/rdmaconnector/" + artifact
                        + "/[^/]+/" + artifact + "-[^/]+\\.jar"))
                        .findFirst().orElseThrow(() -> new AssertionError(KAR + " holds no " + artifact + " jar"));
                try (var in = new java.util.jar.JarInputStream(kar.getInputStream(jar))) {
                    assertEquals("Bundle-Version of " + jar.getName() + " in " + KAR,
                            in.getManifest().getMainAttributes().getValue("Bundle-Version"),
                            running.getVersion().toString());
                }
                assertTrue(running.getSymbolicName() + " was installed from " + running.getLocation(),
                        running.getLocation().startsWith("mvn:org.rdmaconnector/" + artifact + "/"));
            }
        }
    }

    @Test
    public void nativeCallsReachRdmaCoreThroughJna() {
        // the probe's dynamic import wires the exported API to rdma-native
        Bundle provider = FrameworkUtil.getBundle(Rdma.class);
        assertNotNull("Rdma was not loaded from a bundle", provider);
        assertEquals(NATIVE_BUNDLE, provider.getSymbolicName());

        assertTrue("rdma-core did not load inside Karaf: " + Rdma.unavailabilityCause(), Rdma.isAvailable());

        // the build machines have no RDMA device: the CM says so, with errno ENODEV
        RdmaException e = assertThrows(RdmaException.class, EventChannel::create);
        assertEquals("rdma_create_event_channel", e.function());
        assertEquals(19, e.errno());
        assertEquals("ENODEV", e.errnoName());
        assertEquals("rdma_create_event_channel failed: ENODEV (19): no RDMA device is present on this machine",
                e.getMessage());
    }
}
