package org.rdmaconnector.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.rdmaconnector.verbs.jna.ForeignJava;
import org.rdmaconnector.verbs.jna.OpsPath;

/**
 * The soft-RDMA tier: boots Debian's kernel in qemu with Soft-RoCE (it/vm/rdma-vm), runs rdma-core's own tools as a
 * self-check and then ONE JVM with every test tagged {@code device} (from the test jars on this class path) against
 * the real kernel RDMA stack and the real rdma-core, and turns each guest result into a test here, so failures show
 * their messages and the Failsafe summary counts them. A VM that does not boot or report is a failing test with the
 * tail of its console log. The guest JVM is of Java 22 or later when one is found ({@link ForeignJava}), so the
 * inline verbs take their FFM path on the device; else it is this JVM's Java, and a skipped test says so.
 */
class SoftRdmaIT {
    private static final Pattern SELFCHECK_LINE =
        Pattern.compile("^(PASS|FAIL) (.+?)( \\(exit \\d+\\))?$", Pattern.MULTILINE);

    @TestFactory
    Stream<DynamicNode> guestSuite() throws Exception {
        if (Boolean.getBoolean("skipSoftRdma")) {
            String reason = "THE SOFT-RDMA VM TIER WAS SKIPPED (-DskipSoftRdma): no test ran on a real RDMA stack";
            System.err.println("\n*** " + reason + " ***\n");
            return Stream.of(dynamicTest("soft-RDMA tier", () -> Assumptions.abort(reason)));
        }
        // the guest JVM is of Java 22 or later where there is one, so the device tests take the FFM path of the
        // inline verbs; the other VM tiers (DeviceResetIT, TwoHostIT, WildFlyOnRxeIT) run the host's Java 17: JNA
        Optional<Path> ffmJava = ForeignJava.home();
        Path javaHome = ffmJava.orElse(GuestRun.hostJavaHome());
        String path = ffmJava.isPresent() ? OpsPath.FFM.name() : OpsPath.JNA.name();
        String noFfm = "THE FFM PATH OF THE INLINE VERBS RAN ON NO DEVICE: no JDK of Java " + ForeignJava.MIN_FEATURE
            + " or later (looked at " + ForeignJava.searched() + "; set " + ForeignJava.ENV + "); the guest runs "
            + javaHome + " (JNA)";
        System.err.println("\n*** " + (ffmJava.isPresent() ? "soft-RDMA guest JVM: " + javaHome + " (Java "
            + ForeignJava.feature(javaHome) + "): the device tests call the inline verbs through FFM" : noFfm)
            + " ***\n");
        GuestRun run = GuestRun.start(Path.of(System.getProperty("rdma.vm.dir")),
            Path.of(System.getProperty("rdma.vm.share")), System.getProperty("java.class.path"), "device",
            Map.of("RDMA_EXPECT_INLINE_VERBS", path), true, javaHome); // checked by InlineVerbsPathDeviceTest
        List<DynamicNode> nodes = new ArrayList<>();
        if (ffmJava.isEmpty()) {
            nodes.add(dynamicTest("inline verbs through FFM on rxe", () -> Assumptions.abort(noFfm)));
        }
        nodes.add(run.reportedTest());
        nodes.addAll(selfcheck(run));
        nodes.addAll(run.guestTests("device tests"));
        return nodes.stream();
    }

    private static List<DynamicTest> selfcheck(GuestRun run) throws IOException {
        List<DynamicTest> tests = new ArrayList<>();
        Path log = run.share().resolve("selfcheck.log");
        String text = Files.exists(log) ? Files.readString(log) : "";
        Matcher m = SELFCHECK_LINE.matcher(text);
        while (m.find()) {
            String verdict = m.group(1);
            String tool = m.group(2);
            String rest = m.group(3) == null ? "" : m.group(3);
            tests.add(dynamicTest("selfcheck: " + tool, () -> assertEquals("PASS", verdict,
                "rdma-core's own " + tool + " failed in the VM" + rest + ": the environment is broken, not (only) "
                    + "the binding; see " + log + "\n" + text)));
        }
        if (tests.isEmpty()) {
            tests.add(dynamicTest("selfcheck ran", () -> fail("the self-check printed no PASS/FAIL line; see " + log
                + "\n" + text)));
        }
        return tests;
    }
}
