package org.rdmaconnector.it.karaf;

import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import org.junit.Test;

/**
 * Karaf shell commands run from a test through Karaf's {@code SessionFactory} service: the pattern
 * the tests of our own {@code rdma:*} commands use. Shares the Karaf of {@link RdmaFeatureIT} (one boot per module).
 */
public class ShellIT extends KarafTestSupport {

    @Test
    public void bundleListShowsRdmaNativeActive() throws Exception {
        String output = executeCommand("bundle:list -s");
        String line = lineContaining(output, NATIVE_BUNDLE);
        assertTrue(line, line.contains("Active"));
        assertTrue(lineContaining(output, JNA_BUNDLE).contains("Active"));
    }

    @Test
    public void headersCommandShowsWhatRdmaNativeExports() throws Exception {
        String output = executeCommand("bundle:headers " + NATIVE_BUNDLE);
        // the clauses are spread over indented lines, some coloured: compare without escapes and white space
        String flat = output.replaceAll("\u001B\\[[;\\d]*m", "").replaceAll("\\s+", "");
        int exports = flat.indexOf("Export-Package=");
        int imports = flat.indexOf("Import-Package=");
        assertTrue("no Export-Package in:\n" + output, exports >= 0 && imports > exports);
        String exported = flat.substring(exports, imports);
        for (String pkg : new String[] {"org.rdmaconnector.verbs", "org.rdmaconnector.verbs.engine",
                "org.rdmaconnector.connector", "org.rdmaconnector.connector.spi"}) {
            assertTrue(pkg + " not exported:\n" + output, exported.contains(pkg + ";"));
        }
        assertTrue("the JNA import:\n" + output, flat.substring(imports).contains("com.sun.jna;version=\"[5.13,6)\""));
    }

    @Test
    public void unknownCommandFails() throws Exception {
        try {
            executeCommand("rdma:no-such-command");
        } catch (AssertionError expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains("rdma:no-such-command"));
            return;
        }
        fail("an unknown command did not fail");
    }

    private static String lineContaining(String output, String text) {
        for (String line : output.split("\\R")) {
            if (line.contains(text)) {
                return line;
            }
        }
        throw new AssertionError("no line with " + text + " in:\n" + output);
    }
}
