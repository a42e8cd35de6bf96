package org.rdmaconnector.verbs.jna;

import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.CodeSource;

/**
 * Makes sure JNA finds its native dispatch library before its first use. JNA looks for {@code libjnidispatch} next to
 * its own classes; a server that lends its own copy of JNA's classes without the native parts to every deployment
 * (GlassFish 7 does, from {@code modules/libpam4j.jar}) leaves it with nothing to load. Then the copy in our own
 * {@code jna.jar} is extracted to a private temporary directory and named in {@code jna.boot.library.path}, which JNA
 * reads first. Nothing happens when JNA's classes carry their library, or when {@code jna.boot.library.path} is set.
 */
final class JnaSetup {
    private static final System.Logger LOG = System.getLogger(JnaSetup.class.getName());
    private static boolean done;

    private JnaSetup() {
    }

    /** Call before any JNA class is initialized (static initializers of the binding classes). */
    static synchronized void prepare() {
        if (done) {
            return;
        }
        done = true;
        String platform = platformDirectory();
        if (platform == null || System.getProperty("jna.boot.library.path") != null) {
            return;
        }
        String resource = "com/sun/jna/" + platform + "/libjnidispatch.so";
        try {
            ClassLoader ours = JnaSetup.class.getClassLoader();
            Class<?> nativeClass = Class.forName("com.sun.jna.Native", false, ours); // not initialized
            ClassLoader jnaLoader = nativeClass.getClassLoader();
            if (jnaLoader == null || jnaLoader.getResource(resource) != null) {
                return; // JNA will find its own library
            }
            URL copy = ours == null ? null : ours.getResource(resource);
            if (copy == null) {
                return; // nothing better to offer: JNA's own error follows
            }
            Path dir = Files.createTempDirectory("rdma-connector-jna");
            Path library = dir.resolve("libjnidispatch.so");
            try (InputStream in = copy.openStream()) {
                Files.copy(in, library, StandardCopyOption.REPLACE_EXISTING);
            }
            library.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            System.setProperty("jna.boot.library.path", dir.toString());
            LOG.log(Level.INFO, "JNA's classes come from " + where(nativeClass) + ", which has no " + resource
                + "; using the one of rdma-connector's JNA (" + copy + ") from " + dir);
        } catch (ClassNotFoundException | IOException | SecurityException e) {
            LOG.log(Level.WARNING, "cannot prepare JNA's native library (" + e + "); JNA looks for it itself");
        }
    }

    private static String where(Class<?> type) {
        CodeSource source = type.getProtectionDomain().getCodeSource();
        return source == null || source.getLocation() == null ? String.valueOf(type.getClassLoader())
            : source.getLocation().toString();
    }

    /** JNA's resource folder for this platform, or null where we do not know it (JNA then does as it always does). */
    private static String platformDirectory() {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).startsWith("linux")) {
            return null;
        }
        return switch (System.getProperty("os.arch", "")) {
            case "amd64", "x86_64" -> "linux-x86-64";
            case "aarch64" -> "linux-aarch64";
            case "ppc64le" -> "linux-ppc64le";
            case "s390x" -> "linux-s390x";
            default -> null;
        };
    }
}
