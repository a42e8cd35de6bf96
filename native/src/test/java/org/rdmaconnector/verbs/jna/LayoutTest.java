package org.rdmaconnector.verbs.jna;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles src/test/c/layout.c with gcc against the installed rdma-core and libc headers and compares every size,
 * offset and constant with {@link Layout}: both ways, so a value missing on either side fails too.
 */
class LayoutTest {
    private static Map<String, Long> fromHeaders;

    @BeforeAll
    static void compileAndRun(@TempDir Path dir) throws IOException, InterruptedException {
        Path source = Path.of("src/test/c/layout.c").toAbsolutePath();
        Path binary = dir.resolve("layout");
        run(List.of("gcc", "-Wall", "-Werror", "-o", binary.toString(), source.toString()), dir);
        String out = run(List.of(binary.toString()), dir);
        fromHeaders = new TreeMap<>();
        for (String line : out.split("\n")) {
            String[] parts = line.trim().split(" ");
            fromHeaders.put(parts[0], Long.parseLong(parts[1]));
        }
    }

    private static String run(List<String> command, Path dir) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "timed out: " + command);
        assertEquals(0, process.exitValue(), () -> String.join(" ", command) + " failed (are gcc, libibverbs-dev "
            + "and librdmacm-dev installed?):\n" + out);
        return out;
    }

    @Test
    void everyJavaValueMatchesTheHeaders() {
        List<String> wrong = new ArrayList<>();
        Layout.declared().forEach((key, value) -> {
            Long c = fromHeaders.get(key);
            if (!value.equals(c)) {
                wrong.add(key + ": Java " + value + ", C " + c);
            }
        });
        assertTrue(wrong.isEmpty(), "Layout differs from the headers:\n" + String.join("\n", wrong));
    }

    @Test
    void everyHeaderValueIsDeclaredInJava() {
        List<String> missing = new ArrayList<>(fromHeaders.keySet());
        missing.removeAll(Layout.declared().keySet());
        assertTrue(missing.isEmpty(), "layout.c prints values Layout does not declare: " + missing);
    }

    @Test
    void errnoNamesComeFromTheDeclaredValues() {
        assertEquals("ENODEV", Errno.name((int) (long) fromHeaders.get("const.ENODEV")));
        assertEquals("EBUSY", Errno.name((int) (long) fromHeaders.get("const.EBUSY")));
        assertEquals("errno 4095", Errno.name(4095));
    }

    @Test
    void theStructsTheOpsAreReadFromAreThoseOfTheInlineVerbs() throws IOException {
        // ibv_poll_cq and friends are static inline in verbs.h and dereference cq->context->ops.<slot>:
        // the slot names the Java side reads must be the ones the header's inline functions use
        String verbs = Files.readString(Path.of("/usr/include/infiniband/verbs.h"));
        assertTrue(verbs.contains("cq->context->ops.poll_cq(cq, num_entries, wc)"), "ibv_poll_cq changed");
        assertTrue(verbs.contains("cq->context->ops.req_notify_cq(cq, solicited_only)"), "ibv_req_notify_cq changed");
        assertTrue(verbs.contains("qp->context->ops.post_send(qp, wr, bad_wr)"), "ibv_post_send changed");
        assertTrue(verbs.contains("qp->context->ops.post_recv(qp, wr, bad_wr)"), "ibv_post_recv changed");
    }
}
