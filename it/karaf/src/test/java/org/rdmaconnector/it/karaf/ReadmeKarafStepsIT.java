package org.rdmaconnector.it.karaf;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.util.List;

import org.junit.Test;

/**
 * The README's Karaf steps, as a new user runs them right after the README's two commands: they install the KAR that
 * `mvn verify` made (no Maven repository involved: pax-url is offline and has none), the feature's bundles run, and
 * {@code rdma:devices} answers. {@link KarafTestSupport#installRdmaFeature()} ran the steps in the fresh Karaf, before
 * the first test of the module.
 */
public class ReadmeKarafStepsIT extends KarafTestSupport {

    @Test
    public void theStepsInstallTheKarThisBuildMade() throws Exception {
        List<String> steps = readmeKarafSteps();
        String first = steps.get(0);
        assertTrue("the README's first Karaf step is not kar:install file:...: " + first,
                first.startsWith("kar:install file:"));
        String karPath = first.substring("kar:install file:".length()).trim().split("\\s+")[0];
        assertEquals("the KAR the README installs (" + CHECKOUT_PLACEHOLDER + " standing for the checkout)",
                new File(KAR).getCanonicalPath(), new File(karPath).getCanonicalPath());
    }

    @Test
    public void afterTheStepsTheBundlesRunAndRdmaDevicesAnswers() throws Exception {
        String printed = installRdmaFeature();
        assertTrue("what the README's steps printed:\n" + printed,
                printed.contains("rdma:devices\n" + RdmaCommandsIT.NO_DEVICES));
        for (String bundle : List.of(NATIVE_BUNDLE, OSGI_BUNDLE, JNA_BUNDLE)) {
            awaitActive(bundle);
        }
        String devices = executeCommand("rdma:devices");
        assertTrue(devices, devices.startsWith(RdmaCommandsIT.NO_DEVICES));
    }
}
