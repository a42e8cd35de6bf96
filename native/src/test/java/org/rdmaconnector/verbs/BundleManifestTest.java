package org.rdmaconnector.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;

/** rdma-native is an OSGi bundle that exports only its API packages and imports JNA (bnd writes the manifest). */
class BundleManifestTest {
    private static Manifest manifest() throws IOException {
        Path file = Path.of("target/classes/META-INF/MANIFEST.MF");
        assertTrue(Files.exists(file), "bnd-maven-plugin should have written " + file + " (process-classes)");
        try (InputStream in = Files.newInputStream(file)) {
            return new Manifest(in);
        }
    }

    /** Package names of an OSGi header, without attributes (commas inside quotes are not separators). */
    private static List<String> packages(String header) {
        return Arrays.stream(header.split(",(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)"))
            .map(clause -> clause.split(";")[0].trim()).toList();
    }

    @Test
    void exportsOnlyTheApiPackagesWithVersions() throws IOException {
        String exports = manifest().getMainAttributes().getValue("Export-Package");
        // org.rdmaconnector.connector is rdma-api's package, embedded here so containers deploy this bundle alone
        assertEquals(List.of("org.rdmaconnector.connector", "org.rdmaconnector.verbs", "org.rdmaconnector.verbs.engine",
            "org.rdmaconnector.connector.spi"), packages(exports));
        assertTrue(exports.contains("org.rdmaconnector.verbs;version=\"0.2.0\""), exports);
        assertTrue(!exports.contains(".jna"), "the bindings package must stay private: " + exports);
    }

    @Test
    void importsJnaAsABundleAndNothingElseOutsideTheJdk() throws IOException {
        String imports = manifest().getMainAttributes().getValue("Import-Package");
        // its own exported packages may be imported too (bnd makes used exports substitutable)
        List<String> nonJdk = packages(imports).stream()
            .filter(p -> !p.startsWith("java.") && !p.startsWith("org.rdmaconnector.") && !p.equals("javax.management"))
            .toList(); // javax.management: the JDK's JMX, for the activations' MXBeans
        assertEquals(List.of("com.sun.jna"), nonJdk, imports);
        assertEquals("org.rdmaconnector.native", manifest().getMainAttributes().getValue("Bundle-SymbolicName"));
    }
}
