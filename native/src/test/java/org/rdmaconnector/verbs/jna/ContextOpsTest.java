package org.rdmaconnector.verbs.jna;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Both paths of the inline verbs and of {@link Mem}'s reads and writes on the host, over libc functions and a block
 * of memory ({@link ContextOpsCheck}): JNA in this JVM; FFM in a child JVM of Java 22 or later ({@link ForeignJava}),
 * or in this one when it is such a Java. The device tests run them on rxe in the soft-RDMA VM.
 */
class ContextOpsTest {
    @Test
    void theJnaPathCallsEachVerbThroughItsOwnSlotWithItsArgumentsAndKeepsErrno() {
        ContextOps ops = OpsPath.JNA.bind(ContextOpsCheck.libcTable());
        assertEquals(OpsPath.JNA, ops.path());
        ContextOpsCheck.verify(ops);
        ContextOpsCheck.verifyErrno(OpsPath.JNA.bind(ContextOpsCheck.errnoTable()));
        if (OpsPath.chosen() == OpsPath.JNA) { // this JVM's Mem is on JNA's path too
            ContextOpsCheck.verifyMemory(OpsPath.JNA);
        }
    }

    @Test
    void theFfmPathDoesTheSameOnJava22OrLater(@TempDir Path dir) throws IOException, InterruptedException {
        if (Runtime.version().feature() >= ForeignJava.MIN_FEATURE && System.getenv(ForeignJava.ENV) == null) {
            ContextOpsCheck.verify(OpsPath.FFM.bind(ContextOpsCheck.libcTable()));
            ContextOpsCheck.verifyErrno(OpsPath.FFM.bind(ContextOpsCheck.errnoTable()));
            ContextOpsCheck.verifyMemory(OpsPath.FFM);
            return;
        }
        Optional<Path> home = ForeignJava.home();
        if (home.isEmpty()) {
            String reason = "THE FFM PATH OF THE INLINE VERBS WAS NOT TESTED: no JDK of Java " + ForeignJava.MIN_FEATURE
                + " or later (looked at " + ForeignJava.searched() + "; set " + ForeignJava.ENV + ")";
            System.err.println("\n*** " + reason + " ***\n");
            Assumptions.abort(reason);
        }
        List<String> command = new ArrayList<>(List.of(ForeignJava.java(home.get()).toString(),
            "--enable-native-access=ALL-UNNAMED", "-cp", String.join(java.io.File.pathSeparator,
                codeSource(ContextOpsCheck.class), codeSource(ContextOps.class), codeSource(Native.class)),
            ContextOpsCheck.class.getName(), OpsPath.FFM.name()));
        Path output = dir.resolve("child.log");
        // no pipe is left open in this JVM: the other tests count its fds
        Process child = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .redirectErrorStream(true).redirectOutput(output.toFile()).start();
        if (!child.waitFor(120, TimeUnit.SECONDS)) {
            child.destroyForcibly();
        }
        String log = Files.readString(output, StandardCharsets.UTF_8);
        assertEquals(0, child.waitFor(), "the check failed on " + home.get() + ":\n" + log);
        assertTrue(log.contains("ContextOpsCheck passed: FFM"), log);
        // --enable-native-access given: the JDK has nothing to warn about
        assertTrue(!log.contains("WARNING: A restricted method"), log);
    }

    @Test
    void thisJvmChoosesFfmFromJava22AndJnaBefore() {
        OpsPath expected = Runtime.version().feature() >= ForeignJava.MIN_FEATURE ? OpsPath.FFM : OpsPath.JNA;
        assertEquals(expected, OpsPath.chosen(), OpsPath.choiceReason());
        assertTrue(OpsPath.choiceReason().contains("Java " + Runtime.version()), OpsPath.choiceReason());
        if (expected == OpsPath.JNA) {
            assertTrue(OpsPath.choiceReason().contains("final from Java 22"), OpsPath.choiceReason());
            IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> OpsPath.FFM.bind(ContextOpsCheck.libcTable()));
            assertTrue(e.getMessage().startsWith("FFM downcall handles are unavailable"), e.getMessage());
        }
    }

    @Test
    void aContextWhoseProviderLacksAVerbIsRefusedNamingIt() {
        OpsTable libc = ContextOpsCheck.libcTable();
        try (Memory context = Mem.allocate(Layout.SIZEOF_IBV_CONTEXT)) {
            long at = Mem.address(context);
            Mem.putLong(at + Layout.OPS_POLL_CQ, libc.pollCq());
            Mem.putLong(at + Layout.OPS_REQ_NOTIFY_CQ, libc.reqNotifyCq());
            Mem.putLong(at + Layout.OPS_POST_SEND, libc.postSend());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ContextOps.of(at));
            assertEquals("ops.post_recv is NULL: the device's provider does not implement post_recv", e.getMessage());

            Mem.putLong(at + Layout.OPS_POST_RECV, libc.postRecv());
            assertEquals(libc, OpsTable.of(at));
            ContextOpsCheck.verify(ContextOps.of(at));
        }
        assertEquals("context is NULL", assertThrows(IllegalArgumentException.class, () -> OpsTable.of(0)).getMessage());
    }

    private static String codeSource(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
