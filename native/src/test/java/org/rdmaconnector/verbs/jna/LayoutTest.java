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
    // struct epoll_event as the kernel declares it with and without EPOLL_PACKED (u32 events, u64 data)
    private static Map<String, Long> epollModels;

    @BeforeAll
    static void compileAndRun(@TempDir Path dir) throws IOException, InterruptedException {
        fromHeaders = compileAndRun(Path.of("src/test/c/layout.c").toAbsolutePath(), dir);
        Path models = dir.resolve("epoll_models.c");
        Files.writeString(models, """
            #include <stddef.h>
            #include <stdint.h>
            #include <stdio.h>
            struct packed { uint32_t events; uint64_t data; } __attribute__((packed));
            struct natural { uint32_t events; uint64_t data; };
            #define PRINT(s) printf(#s ".size %zu\\n" #s ".events %zu\\n" #s ".data %zu\\n", sizeof(struct s), \\
                offsetof(struct s, events), offsetof(struct s, data))
            int main(void) { PRINT(packed); PRINT(natural); return 0; }
            """);
        epollModels = compileAndRun(models, dir);
    }

    private static Map<String, Long> compileAndRun(Path source, Path dir) throws IOException, InterruptedException {
        Path binary = dir.resolve(source.getFileName().toString().replace(".c", ""));
        run(List.of("gcc", "-Wall", "-Werror", "-o", binary.toString(), source.toString()), dir);
        String out = run(List.of(binary.toString()), dir);
        Map<String, Long> values = new TreeMap<>();
        for (String line : out.split("\n")) {
            String[] parts = line.trim().split(" ");
            values.put(parts[0], Long.parseLong(parts[1]));
        }
        return values;
    }

    private static String run(List<String> command, Path dir) throws IOException, InterruptedException {
        Process process;
        try {
            process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IOException("cannot run " + command.get(0) + ": LayoutTest compiles src/test/c/layout.c against "
                + "the installed headers; .ci/prerequisites names what is missing and its apt-get line ("
                + e.getMessage() + ")", e);
        }
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
    void epollEventIsPackedOnX8664OnlyAsTheKernelHeaderSays() throws IOException {
        // linux/eventpoll.h: "#ifdef __x86_64__ / #define EPOLL_PACKED __attribute__((packed)) / #else / #define
        // EPOLL_PACKED / #endif", and struct epoll_event { __poll_t events; __u64 data; } EPOLL_PACKED
        String header = Files.readString(Path.of("/usr/include/linux/eventpoll.h")).replaceAll("[ \t]+", " ");
        assertTrue(header.contains("#ifdef __x86_64__\n#define EPOLL_PACKED __attribute__((packed))\n#else\n"
            + "#define EPOLL_PACKED\n#endif"), "the kernel's EPOLL_PACKED rule changed: lay epoll_event out again");
        assertTrue(header.contains("struct epoll_event {\n __poll_t events;\n __u64 data;\n} EPOLL_PACKED;"),
            "struct epoll_event changed");
    }

    @Test
    void everyArchitectureLaidOutHasTheEpollEventOfItsRule() {
        // packed on x86-64; elsewhere natural alignment, as gcc lays the unpacked struct out here: a u64 is 8-aligned
        // on x86-64 as on every other 64-bit Linux ABI laid out (aarch64, ppc64le, s390x, riscv64)
        Layout.EpollEvent packed = model("packed");
        Layout.EpollEvent natural = model("natural");
        assertEquals(new Layout.EpollEvent(12, 0, 4), packed);
        assertEquals(new Layout.EpollEvent(16, 0, 8), natural);
        Layout.EpollEvent.BY_ARCH.forEach((arch, layout) -> assertEquals(
            arch.equals("amd64") || arch.equals("x86_64") ? packed : natural, layout, arch));
        assertEquals(Layout.epollEventOf("aarch64"), natural);
        assertEquals(null, Layout.epollEventOf("i386"), "32-bit x86 is not laid out");
        // and the build host's, from its own headers (everyJavaValueMatchesTheHeaders checks the same keys)
        assertEquals(new Layout.EpollEvent((int) (long) fromHeaders.get("sizeof.epoll_event"),
            (int) (long) fromHeaders.get("epoll_event.events"), (int) (long) fromHeaders.get("epoll_event.data")),
            Layout.epollEventOf(Layout.ARCH), Layout.ARCH);
    }

    private static Layout.EpollEvent model(String name) {
        return new Layout.EpollEvent((int) (long) epollModels.get(name + ".size"),
            (int) (long) epollModels.get(name + ".events"), (int) (long) epollModels.get(name + ".data"));
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
