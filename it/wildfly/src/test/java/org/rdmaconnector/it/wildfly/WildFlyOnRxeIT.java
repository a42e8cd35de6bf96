package org.rdmaconnector.it.wildfly;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * End to end on a real device: WildFly 39 (standalone-full, fail-on-warn) runs inside the soft-RDMA VM with the rar
 * and the test application; the application's bean connects through the pooled factory to its own MDBs' listener
 * on rxe0 and sends {@value #K} messages. The MDBs must see CONNECT_REQUEST, ESTABLISHED, DISCONNECTED and exactly
 * K receive completions with the right bytes in order, and every Completion of the bean must complete.
 */
class WildFlyOnRxeIT {
    static final int K = 64;
    private static final long HOST_TIMEOUT_MINUTES = 20;

    @Test
    void theBeanReachesTheMdbsOverRxeThroughThePooledFactory() throws Exception {
        if (Boolean.getBoolean("skipSoftRdma")) {
            String reason = "THE WILDFLY-ON-RXE TEST WAS SKIPPED (-DskipSoftRdma): no server saw a real RDMA device";
            System.err.println("\n*** " + reason + " ***\n");
            Assumptions.abort(reason);
        }
        Path vm = Path.of(System.getProperty("rdma.vm.dir"));
        Path share = Path.of(System.getProperty("rdma.e2e.share"));
        clean(share);
        Files.createDirectories(share);
        Path rar = Files.copy(Path.of(System.getProperty("rdma.rar")), share.resolve("rdma-connector.rar"),
            StandardCopyOption.REPLACE_EXISTING);
        Path war = Files.copy(Path.of(System.getProperty("rdma.app.war")), share.resolve("rdma-it-app.war"),
            StandardCopyOption.REPLACE_EXISTING);
        Path run = share.resolve("run.txt");
        Path status = share.resolve("status.txt");
        String base = "http://127.0.0.1:8080/rdma-it-app/rdma/";
        List<String> command = new ArrayList<>(List.of("bash", vm.resolve("rdma-vm").toString(), "run",
            "--share", share.toString(), "--mem", "1G", "--timeout", "1000", "--quiet", "--",
            "bash", vm.resolve("appserver.sh").toString(),
            "--server-home", System.getProperty("jboss.home"), "--config", "standalone-full.xml", "--fail-on-warn",
            "--trim", "--no-verify", // unused subsystems dropped, no bytecode verification: a faster boot under TCG
            "--deploy", rar.toString(), war.toString(),
            "--url", base + "run?k=" + K, "--out", run.toString(),
            "--url", base + "status", "--out", status.toString()));
        Path hostLog = share.resolve("host.log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(hostLog.toFile())
            .start();
        if (!process.waitFor(HOST_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new AssertionError("the VM did not finish within " + HOST_TIMEOUT_MINUTES + " minutes\n"
                + tail(hostLog, 60));
        }
        assertEquals(0, process.exitValue(), () -> "rdma-vm run / appserver.sh failed (" + command + ")\n"
            + tail(hostLog, 60) + "\n--- server log ---\n" + tail(share.resolve("wildfly-base/log/server.log"), 60));

        List<String> lines = Files.readAllLines(run);
        String report = String.join("\n", lines);
        assertEquals("device rxe0", lines.get(0), report);
        assertTrue(lines.contains("sent " + K), report);
        assertTrue(lines.contains("send-completions " + K), report);
        assertTrue(lines.contains("cm-events CONNECT_REQUEST,ESTABLISHED,DISCONNECTED"), report);
        assertTrue(lines.contains("received " + K), report);
        assertTrue(lines.contains("received-in-order true"), report);
        assertTrue(lines.contains("first message-0"), report);
        assertTrue(lines.contains("last message-" + (K - 1)), report);
        assertTrue(lines.stream().noneMatch(l -> l.startsWith("error") || l.contains("failed")
            || l.contains("timed out")), report);

        List<String> state = Files.readAllLines(status);
        assertTrue(state.contains("connection ok rxe0"), String.join("\n", state));
        assertEquals(2, state.stream().filter(l -> l.startsWith("activation ")
            && l.contains(" 10.0.0.1:7471 LISTENING listening on ")).count(), String.join("\n", state));
    }

    private static String tail(Path file, int lines) {
        try {
            List<String> all = Files.readAllLines(file);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(" + file + ": " + e + ")";
        }
    }

    private static void clean(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> paths = Files.walk(dir)) {
                for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }
}
