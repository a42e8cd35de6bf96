package org.rdmaconnector.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;

/**
 * One boot of the soft-RDMA VM: the self-check (optional), then one guest JVM running the tests of one tag, with
 * results, console log and exit code left in the share (a folder the guest sees at the same path).
 */
final class GuestRun {
    /** Guest-side limit for the whole payload; the host adds rdma-vm's boot allowance on top. */
    static final int GUEST_TIMEOUT_SECONDS = 1200;

    private final Path share;
    private final int exitCode;

    private GuestRun(Path share, int exitCode) {
        this.share = share;
        this.exitCode = exitCode;
    }

    /** The self-check, then every test tagged {@code device}. */
    static GuestRun start(Path vmDir, Path share, String classPath) throws IOException, InterruptedException {
        return start(vmDir, share, classPath, "device", Map.of(), true);
    }

    /**
     * The self-check if {@code selfcheck}, then every test tagged {@code tag} in one JVM whose environment has
     * {@code environment} added.
     */
    static GuestRun start(Path vmDir, Path share, String classPath, String tag, Map<String, String> environment,
                          boolean selfcheck) throws IOException, InterruptedException {
        return start(vmDir, share, classPath, tag, environment, selfcheck, hostJavaHome());
    }

    /** As above, with the guest JVM from the JDK at {@code javaHome} (the host's root is the guest's). */
    static GuestRun start(Path vmDir, Path share, String classPath, String tag, Map<String, String> environment,
                          boolean selfcheck, Path javaHome) throws IOException, InterruptedException {
        deleteTree(share);
        Files.createDirectories(share);
        Path payload = share.resolve("payload.sh");
        Files.writeString(payload, String.join("\n",
            "#!/bin/bash",
            "# written by GuestRun: " + (selfcheck ? "the self-check, then " : "") + "one JVM with every test "
                + "tagged '" + tag + "'",
            "cd " + quote(share.toString()),
            selfcheck ? "bash " + quote(vmDir.resolve("selfcheck.sh").toString()) + " > selfcheck.log 2>&1" : "",
            selfcheck ? "echo \"selfcheck exit $?\"" : "",
            environment.entrySet().stream().map(e -> "export " + e.getKey() + "=" + quote(e.getValue()))
                .collect(Collectors.joining("\n")),
            "exec " + guestJava(javaHome, share, classPath, "512m") + " " + consoleLauncher(tag),
            ""), StandardCharsets.UTF_8);
        Files.createDirectories(share.resolve("tmp"));
        ProcessBuilder builder = new ProcessBuilder(vmDir.resolve("rdma-vm").toString(), "run", "--quiet",
            "--share", share.toString(), "--timeout", String.valueOf(GUEST_TIMEOUT_SECONDS), "--",
            "/bin/bash", payload.toString())
            .redirectErrorStream(true)
            .redirectOutput(share.resolve("rdma-vm.log").toFile());
        Process process = builder.start();
        if (!process.waitFor(GUEST_TIMEOUT_SECONDS + 300, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor();
            return new GuestRun(share, 124);
        }
        return new GuestRun(share, process.exitValue());
    }

    /**
     * The guest JVM's command line up to the main class: C1 only and the serial GC (FACTS: TCG and C2), direct memory
     * capped at 32 MB (the cap under which ChurnDeviceTest's connections must never be refused), temporary files in
     * the share's tmp (the caller creates it); the host's JDK.
     */
    static String guestJava(Path share, String classPath, String heap) throws IOException {
        return guestJava(hostJavaHome(), share, classPath, heap);
    }

    /**
     * As above, from the JDK at {@code javaHome}; native access enabled (JNA's library, FFM's downcall handles), so
     * Java 24 and later do not warn (Java 17 accepts the option too).
     */
    static String guestJava(Path javaHome, Path share, String classPath, String heap) throws IOException {
        Path java = javaHome.resolve("bin").resolve("java");
        return quote(java.toString()) + " -Xmx" + heap + " -XX:MaxDirectMemorySize=32m -XX:TieredStopAtLevel=1"
            + " -XX:+UseSerialGC --enable-native-access=ALL-UNNAMED"
            + " -Djava.io.tmpdir=" + quote(share.resolve("tmp").toString())
            + " -cp " + quote(classPath);
    }

    /** The JDK this JVM runs on. */
    static Path hostJavaHome() {
        return Path.of(System.getProperty("java.home"));
    }

    /** The console launcher's arguments: every test tagged {@code tag}, reports into ./reports. */
    static String consoleLauncher(String tag) {
        return "org.junit.platform.console.ConsoleLauncher execute --select-package org.rdmaconnector"
            + " --include-tag " + quote(tag) + " --fail-if-no-tests --reports-dir reports --details=tree"
            + " --disable-banner"
            // @Order on a test class puts it first or last (the device removal test runs last)
            + " --config " + quote("junit.jupiter.testclass.order.default="
                + "org.junit.jupiter.api.ClassOrderer$OrderAnnotation")
            + " --disable-ansi-colors";
    }

    /** {@code s} as one single-quoted shell word. */
    static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    /** Deletes {@code dir} and everything in it, if it exists. */
    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted((a, b) -> b.compareTo(a)).toList()) {
                Files.delete(p);
            }
        }
    }

    Path share() {
        return share;
    }

    Path reportsDir() {
        return share.resolve("reports");
    }

    int exitCode() {
        return exitCode;
    }

    /** Whether the guest wrote its exit code (rdma-vm's marker of a completed run). */
    boolean reported() {
        return Files.exists(share.resolve("exit-code"));
    }

    /** A test that fails with the console's tail when the guest did not report an exit code. */
    DynamicTest reportedTest() {
        return DynamicTest.dynamicTest("VM booted and reported", () -> {
            if (!reported()) {
                throw new AssertionError("the soft-RDMA VM did not report an exit code (rdma-vm exit " + exitCode
                    + "); last console lines:\n" + consoleTail(60));
            }
        });
    }

    /**
     * A test that fails when the guest JVM left no report of {@code what}, then one test per guest test, ending as
     * it ended in the guest.
     */
    List<DynamicTest> guestTests(String what) throws Exception {
        List<GuestResults.Case> cases = GuestResults.read(reportsDir());
        List<DynamicTest> tests = new ArrayList<>();
        tests.add(DynamicTest.dynamicTest("guest JVM ran the " + what, () -> {
            if (cases.isEmpty()) {
                throw new AssertionError("no guest test reports in " + reportsDir() + " (guest exit " + exitCode
                    + "); last console lines:\n" + consoleTail(60));
            }
        }));
        tests.addAll(GuestResults.asTests(cases, "guest"));
        return tests;
    }

    String consoleTail(int lines) throws IOException {
        return tails(List.of(share.resolve("console.log"), share.resolve("rdma-vm.log")), lines);
    }

    /** The last {@code lines} lines of each of {@code files} that exists, each under a header naming it. */
    static String tails(List<Path> files, int lines) throws IOException {
        StringBuilder out = new StringBuilder();
        for (Path file : files) {
            if (Files.exists(file)) {
                List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
                out.append("--- ").append(file).append(" ---\n");
                all.subList(Math.max(0, all.size() - lines), all.size()).forEach(l -> out.append(l).append('\n'));
            }
        }
        return out.toString();
    }
}
