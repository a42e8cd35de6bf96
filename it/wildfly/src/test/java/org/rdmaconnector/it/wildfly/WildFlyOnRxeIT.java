package org.rdmaconnector.it.wildfly;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * End to end on a real device and across a wire: {@code rdma-vm run2} boots two soft-RDMA guests whose rxe0 devices
 * sit on one virtual wire. Guest a runs WildFly 39 (standalone-full, fail-on-warn) with the rar and the test
 * application, whose MDBs listen on 10.0.0.1:7471 (an address a adds to its wire interface {@code eth0}; b routes
 * it over the wire). In a, the application's bean connects through the pooled factory to its own MDBs and sends
 * {@value #K} messages, each echoed. In b, across the wire, one JVM waits (bounded) until a's activations are
 * LISTENING, then the connector's channel set sends {@value #MESSAGES} seeded messages on each of
 * {@value #CONNECTIONS} connections (every echo checked), then rdma-core's {@code rdma_client} runs
 * {@value #TOOL_RUNS} times. The MDBs must have seen exactly those connections from b, each with its messages'
 * count, bytes (CRC-32) and order. Either guest's failure or silence fails with both consoles' tails.
 */
class WildFlyOnRxeIT {
    static final int K = 64;
    static final int CONNECTIONS = 2;
    static final int MESSAGES = 100;
    static final int TOOL_RUNS = 2;
    static final long SEED = 20261202L;
    private static final String LISTENER = "10.0.0.1";
    private static final int PORT = 7471;
    private static final String B = "10.1.0.2";
    /** Each guest's limit; rdma-vm adds its boot allowance on top. */
    private static final int GUEST_TIMEOUT_SECONDS = 1000;
    private static final Pattern CONNECTION = Pattern.compile("connection (\\d+) from (\\S+) events (\\S+) received "
        + "(\\d+) bytes (\\d+) crc32 (\\p{XDigit}+) in-sequence (\\w+) echoes (\\d+) failures (\\d+).*");
    private static final Pattern SENT = Pattern.compile("sent seed \\d+ received (\\d+) bytes (\\d+) crc32 "
        + "(\\p{XDigit}+) from .*");

    @Test
    void wildFlysMdbsServeTheBeanAndAPeerHostAcrossTheWire() throws Exception {
        if (Boolean.getBoolean("skipSoftRdma")) {
            String reason = "THE WILDFLY-ON-RXE TEST WAS SKIPPED (-DskipSoftRdma): no server saw a real RDMA device";
            System.err.println("\n*** " + reason + " ***\n");
            Assumptions.abort(reason);
        }
        Path vm = Path.of(System.getProperty("rdma.vm.dir"));
        Path base = Path.of(System.getProperty("rdma.e2e.share"));
        clean(base);
        Path a = Files.createDirectories(base.resolve("a"));
        Path b = Files.createDirectories(base.resolve("b"));
        Files.createDirectories(b.resolve("tmp"));
        Path rar = Files.copy(Path.of(System.getProperty("rdma.rar")), a.resolve("rdma-connector.rar"),
            StandardCopyOption.REPLACE_EXISTING);
        Path war = Files.copy(Path.of(System.getProperty("rdma.app.war")), a.resolve("rdma-it-app.war"),
            StandardCopyOption.REPLACE_EXISTING);
        String app = "/rdma-it-app/rdma/";
        String local = "http://127.0.0.1:8080" + app;
        Path run = a.resolve("run.txt");
        Path peers = a.resolve("peers.txt");
        Path status = a.resolve("status.txt");
        Path sent = b.resolve("sent.txt");
        Path scriptA = script(a.resolve("a.sh"), a,
            "# the MDBs' address, on a's wire interface (b routes it over the wire)",
            "ip addr add " + LISTENER + "/32 dev eth0 || exit 1",
            "exec bash " + q(vm.resolve("appserver.sh")) + " --server-home " + q(Path.of(System.getProperty(
                "jboss.home"))) + " --config standalone-full.xml --fail-on-warn --trim --no-verify"
                // HTTP on the wire too: b polls the activations' state before it connects
                + " --property jboss.bind.address=0.0.0.0"
                + " --deploy " + q(rar) + " " + q(war)
                + " --url " + q(local + "run?k=" + K) + " --out " + q(run)
                + " --url " + q(local + "peers?host=" + B + "&connections=" + (CONNECTIONS + TOOL_RUNS)
                    + "&wait=" + (GUEST_TIMEOUT_SECONDS - 300)) + " --out " + q(peers)
                + " --url " + q(local + "status") + " --out " + q(status));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path scriptB = script(b.resolve("b.sh"), b,
            "ip route add " + LISTENER + "/32 dev eth0 || exit 1",
            "exec " + q(java) + " -Xmx256m -XX:MaxDirectMemorySize=32m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
                + " -Djava.io.tmpdir=" + q(b.resolve("tmp")) + " -cp " + q(System.getProperty("rdma.peer.classpath"))
                + " org.rdmaconnector.verbs.device.WildFlyPeer " + LISTENER + " " + PORT + " "
                + q("http://10.1.0.1:8080" + app) + " " + CONNECTIONS + " " + MESSAGES + " " + SEED + " "
                + TOOL_RUNS + " " + (GUEST_TIMEOUT_SECONDS - 100) + " " + q(sent));
        Path hostLog = base.resolve("rdma-vm.log");
        ProcessBuilder builder = new ProcessBuilder("bash", vm.resolve("rdma-vm").toString(), "run2", "--quiet",
            "--mem", "1G", "--timeout", String.valueOf(GUEST_TIMEOUT_SECONDS),
            "--share-a", a.toString(), "--share-b", b.toString(),
            "--", "/bin/bash", scriptA.toString(), "--", "/bin/bash", scriptB.toString())
            .redirectErrorStream(true).redirectOutput(hostLog.toFile());
        // WildFly's boot needs the two vCPUs it has in a single guest; b mostly waits
        builder.environment().put("RDMA_VM_SMP", "2");
        long start = System.nanoTime();
        Process process = builder.start();
        // rdma-vm's own host-side limit is the guest timeout + its boot allowance; this one only catches a hung run2
        if (!process.waitFor(GUEST_TIMEOUT_SECONDS + 240, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            throw new AssertionError("rdma-vm run2 did not end in time\n" + tails(base));
        }
        System.out.println("WildFlyOnRxeIT: rdma-vm run2 took " + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime()
            - start) + " s, exit " + process.exitValue());
        assertEquals(0, process.exitValue(), () -> "rdma-vm run2 (WildFly in a, the peer in b) failed\n"
            + tails(base));

        // a: the bean through the pooled factory to its own MDBs, as in the single-guest test
        List<String> lines = Files.readAllLines(run);
        String report = String.join("\n", lines);
        assertEquals("device rxe0", lines.get(0), report);
        assertTrue(lines.contains("sent " + K), report);
        assertTrue(lines.contains("send-completions " + K), report);
        assertTrue(lines.contains("echoes " + K), report);
        assertTrue(lines.contains("cm-events CONNECT_REQUEST,ESTABLISHED,DISCONNECTED"), report);
        assertTrue(lines.contains("received " + K), report);
        assertTrue(lines.contains("received-in-order true"), report);
        assertTrue(lines.contains("first message-0"), report);
        assertTrue(lines.contains("last message-" + (K - 1)), report);
        assertTrue(lines.stream().noneMatch(l -> l.startsWith("error") || l.contains("failed")
            || l.contains("timed out") || l.contains("wrong")), report);

        List<String> state = Files.readAllLines(status);
        assertTrue(state.contains("connection ok rxe0"), String.join("\n", state));
        assertEquals(2, state.stream().filter(l -> l.startsWith("activation ")
            && l.contains(" " + LISTENER + ":" + PORT + " LISTENING listening on ")).count(),
            String.join("\n", state));

        // b across the wire: exactly its connections, in the order b made them, each message once, intact, in order
        List<String> seen = Files.readAllLines(peers);
        List<String> wanted = Files.readAllLines(sent);
        String both = "the MDBs saw:\n" + String.join("\n", seen) + "\nb sent:\n" + String.join("\n", wanted);
        assertEquals(CONNECTIONS, wanted.size(), both);
        assertEquals("peer-connections " + (CONNECTIONS + TOOL_RUNS), seen.get(seen.size() - 1), both);
        for (int i = 0; i < CONNECTIONS + TOOL_RUNS; i++) {
            Matcher m = CONNECTION.matcher(seen.get(i));
            assertTrue(m.matches(), both);
            assertEquals(B, m.group(2), both);
            if (i < CONNECTIONS) {
                assertEquals("CONNECT_REQUEST,ESTABLISHED,DISCONNECTED", m.group(3), both);
            } else { // rdma_client connects, sends and disconnects at once: the kernel CM on a may handle its DREQ
                // before its RTU, and then reports no ESTABLISHED (README, "Message-driven beans"); the data still
                // arrives and is echoed, which the lines below assert
                assertTrue(m.group(3).matches("CONNECT_REQUEST,(ESTABLISHED,)?DISCONNECTED"), both);
            }
            assertEquals("true", m.group(7), "receives out of sequence\n" + both);
            assertEquals(m.group(4), m.group(8), "every receive echoed, each echo completed successfully\n" + both);
            assertEquals("0", m.group(9), "failed receives or echoes\n" + both);
            Map.Entry<String, String> got = Map.entry(m.group(4) + " " + m.group(5), m.group(6));
            if (i < CONNECTIONS) { // the connector's client: MESSAGES seeded messages of 8 to 1024 bytes
                Matcher s = SENT.matcher(wanted.get(i));
                assertTrue(s.matches(), both);
                assertEquals(String.valueOf(MESSAGES), s.group(1), both);
                assertEquals(Map.entry(s.group(1) + " " + s.group(2), s.group(3)), got, both);
            } else { // rdma_client: one 16-byte message of zeros
                CRC32 zeros = new CRC32();
                zeros.update(new byte[16]);
                assertEquals(Map.entry("1 16", Long.toHexString(zeros.getValue())), got, both);
            }
        }
    }

    private static Path script(Path file, Path share, String... lines) throws IOException {
        return Files.writeString(file, "#!/bin/bash\n# written by WildFlyOnRxeIT\ncd " + q(share) + "\n"
            + String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
    }

    private static String q(Object s) {
        return "'" + s.toString().replace("'", "'\\''") + "'";
    }

    /** The last lines of rdma-vm's log, both consoles and a's server log. */
    private static String tails(Path base) {
        StringBuilder out = new StringBuilder();
        for (Path file : List.of(base.resolve("rdma-vm.log"), base.resolve("a/console.log"),
            base.resolve("b/console.log"), base.resolve("a/wildfly-base/log/server.log"))) {
            out.append("--- ").append(file).append(" ---\n").append(tail(file, 60)).append('\n');
        }
        return out.toString();
    }

    private static String tail(Path file, int lines) {
        try {
            List<String> all = Files.readAllLines(file, StandardCharsets.ISO_8859_1);
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
