package org.rdmaconnector.verbs.jna;

import java.lang.System.Logger.Level;

/**
 * How {@link ContextOps} calls the provider's functions, chosen once per JVM ({@link #chosen()}): {@link #FFM} where
 * the JDK's foreign function API is final (Java 22 and later), else {@link #JNA}. The system property
 * {@value #PROPERTY}{@code =jna} keeps JNA on any Java. One log line says the choice and, when FFM was expected but
 * could not be used, why.
 */
public enum OpsPath {
    /** The JDK's downcall handles ({@code java.lang.foreign}): no boxing, 0 B per call. */
    FFM,
    /** JNA's {@code Function.invokeInt(Object[])}: any Java; boxes every argument. */
    JNA;

    /** The system property that chooses the path: {@code jna}, or {@code ffm} (the default where available). */
    public static final String PROPERTY = "org.rdmaconnector.inlineVerbs";

    /**
     * The ops of {@code table} on this path.
     *
     * @throws IllegalStateException for {@link #FFM} where this Java has no downcall handles
     */
    public ContextOps bind(OpsTable table) {
        return this == FFM ? new FfmContextOps(table) : new JnaContextOps(table);
    }

    /** The path of this JVM's {@link ContextOps#of}. */
    public static OpsPath chosen() {
        return Choice.PATH;
    }

    /** The sentence logged when the path was chosen: which path, on which Java, and why. */
    public static String choiceReason() {
        return Choice.REASON;
    }

    private static final class Choice {
        private static final System.Logger LOG = System.getLogger(OpsPath.class.getName());
        static final OpsPath PATH;
        static final String REASON;

        static {
            String asked = System.getProperty(PROPERTY);
            boolean jnaAsked = asked != null && asked.trim().equalsIgnoreCase("jna");
            // not even built when JNA is asked for: building is what makes Java 22+ warn about native access
            Throwable cause = jnaAsked ? null : FfmDowncalls.unavailabilityCause();
            String java = "Java " + Runtime.version();
            Level level = Level.INFO;
            if (jnaAsked) {
                PATH = JNA;
                REASON = "inline verbs through JNA's Function on " + java + " (" + PROPERTY + "=jna)";
            } else if (cause == null) {
                PATH = FFM;
                REASON = "inline verbs through the JDK's FFM downcall handles on " + java;
            } else {
                PATH = JNA;
                REASON = "inline verbs through JNA's Function (boxed: slower, allocates) on " + java
                    + ": no FFM downcall handles: " + cause;
                if (Runtime.version().feature() >= 22) {
                    level = Level.WARNING; // FFM was expected here
                }
            }
            if (asked != null && !jnaAsked && !asked.trim().equalsIgnoreCase("ffm")) {
                level = Level.WARNING;
                LOG.log(level, REASON + "; " + PROPERTY + "=" + asked + " ignored: it is neither ffm nor jna");
            } else if (level == Level.WARNING) {
                LOG.log(level, REASON, cause);
            } else {
                LOG.log(level, REASON);
            }
        }
    }
}
