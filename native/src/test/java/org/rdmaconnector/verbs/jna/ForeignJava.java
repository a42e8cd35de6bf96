package org.rdmaconnector.verbs.jna;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Finds a JDK whose Java has the final foreign function API (22 or later), for the tests of the {@link OpsPath#FFM}
 * path when the build runs on an older Java: {@code $RDMA_FFM_JAVA_HOME} if set (it must be such a JDK), else this
 * JVM if it is one, else the newest such JDK in the distribution's JVM directory ({@code /usr/lib/jvm}, by its
 * {@code release} file).
 */
public final class ForeignJava {
    /** The environment variable naming the JDK to use. */
    public static final String ENV = "RDMA_FFM_JAVA_HOME";
    /** The first Java whose {@code java.lang.foreign} is final. */
    public static final int MIN_FEATURE = 22;
    private static final Path JVM_DIR = Path.of("/usr/lib/jvm");
    private static final Pattern VERSION = Pattern.compile("^JAVA_VERSION=\"(\\d+)", Pattern.MULTILINE);

    private ForeignJava() {
    }

    /**
     * The home of a JDK of Java 22 or later, or empty when there is none.
     *
     * @throws IllegalStateException when {@code $RDMA_FFM_JAVA_HOME} is set but is no such JDK
     */
    public static Optional<Path> home() {
        String named = System.getenv(ENV);
        if (named != null && !named.isBlank()) {
            Path home = Path.of(named);
            int feature = feature(home);
            if (feature < MIN_FEATURE || !Files.isExecutable(java(home))) {
                throw new IllegalStateException(ENV + "=" + named + " is not the home of a JDK of Java " + MIN_FEATURE
                    + " or later (its release file says " + (feature < 0 ? "nothing" : "Java " + feature) + ")");
            }
            return Optional.of(home);
        }
        if (Runtime.version().feature() >= MIN_FEATURE) {
            return Optional.of(Path.of(System.getProperty("java.home")));
        }
        if (!Files.isDirectory(JVM_DIR)) {
            return Optional.empty();
        }
        try (Stream<Path> homes = Files.list(JVM_DIR)) {
            List<Path> found = homes.filter(h -> feature(h) >= MIN_FEATURE && Files.isExecutable(java(h)))
                .sorted(Comparator.comparingInt(ForeignJava::feature).reversed()).toList();
            return found.stream().findFirst();
        } catch (IOException e) {
            throw new IllegalStateException("cannot list " + JVM_DIR, e);
        }
    }

    /** Where {@link #home()} looks, for the message of a test skipped for want of one. */
    public static String searched() {
        return "$" + ENV + " (unset), this JVM (Java " + Runtime.version().feature() + "), the release files in "
            + JVM_DIR;
    }

    /** The {@code java} launcher of {@code home}. */
    public static Path java(Path home) {
        return home.resolve("bin").resolve("java");
    }

    /** The feature release of the JDK at {@code home} by its {@code release} file, or -1 when it has none. */
    public static int feature(Path home) {
        Path release = home.resolve("release");
        if (!Files.isRegularFile(release)) {
            return -1;
        }
        try {
            Matcher m = VERSION.matcher(Files.readString(release));
            return m.find() ? Integer.parseInt(m.group(1)) : -1;
        } catch (IOException e) {
            return -1;
        }
    }
}
