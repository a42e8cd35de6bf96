package org.rdmaconnector.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The two-host tier: {@code rdma-vm run2} boots two guests whose rxe0 devices sit on one virtual wire (10.1.0.1 and
 * 10.1.0.2), and rdma-core's {@code rdma_server} in guest a and {@code rdma_client -s 10.1.0.1} in guest b exchange a
 * message over RoCEv2 between two kernels. The client retries until the server listens (the guests boot
 * independently); everything is bounded, and a VM that does not report fails with both consoles' tails.
 */
class TwoHostIT {
    /** Guest-side limit per payload; rdma-vm adds its boot allowance on top. */
    private static final int GUEST_TIMEOUT_SECONDS = 150;
    /** How long the client keeps retrying its connect, and the server waits for it. */
    private static final int CONNECT_DEADLINE_SECONDS = 100;

    @Test
    void rdmaClientAndServerOnTwoKernels() throws Exception {
        if (Boolean.getBoolean("skipSoftRdma")) {
            String reason = "THE TWO-HOST VM TIER WAS SKIPPED (-DskipSoftRdma): no test ran across two kernels";
            System.err.println("\n*** " + reason + " ***\n");
            Assumptions.abort(reason);
        }
        Path vmDir = Path.of(System.getProperty("rdma.vm.dir"));
        Path base = Path.of(System.getProperty("rdma.vm.twohost.share"));
        GuestRun.deleteTree(base);
        Path a = Files.createDirectories(base.resolve("a"));
        Path b = Files.createDirectories(base.resolve("b"));
        Path server = write(a.resolve("server.sh"),
            "# guest a (written by TwoHostIT): one rdma_server connection, bounded",
            "cd " + GuestRun.quote(a.toString()),
            "echo \"role=$RDMA_VM_ROLE self=$RDMA_VM_SELF peer=$RDMA_VM_PEER\"",
            "timeout " + CONNECT_DEADLINE_SECONDS + " rdma_server > server.out 2>&1",
            "rc=$?",
            "cat server.out",
            "exit $rc");
        Path client = write(b.resolve("client.sh"),
            "# guest b (written by TwoHostIT): rdma_client to guest a, retried until the server listens",
            "cd " + GuestRun.quote(b.toString()),
            "echo \"role=$RDMA_VM_ROLE self=$RDMA_VM_SELF peer=$RDMA_VM_PEER\"",
            "deadline=$((SECONDS + " + CONNECT_DEADLINE_SECONDS + "))",
            "n=0",
            "while ((SECONDS < deadline)); do",
            "    n=$((n + 1))",
            "    if timeout 20 rdma_client -s \"$RDMA_VM_PEER\" > client.out 2>&1; then",
            "        echo \"attempts $n\" >> client.out",
            "        ip neigh show dev eth0 >> client.out",
            "        cat client.out",
            "        exit 0",
            "    fi",
            "    sleep 0.5",
            "done",
            "echo \"no connection after $n attempts\" >> client.out",
            "cat client.out",
            "exit 1");
        Path log = base.resolve("rdma-vm.log");
        long start = System.nanoTime();
        Process process = new ProcessBuilder(vmDir.resolve("rdma-vm").toString(), "run2", "--quiet",
            "--timeout", String.valueOf(GUEST_TIMEOUT_SECONDS), "--share-a", a.toString(), "--share-b", b.toString(),
            "--", "/bin/bash", server.toString(), "--", "/bin/bash", client.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
        // rdma-vm's own host-side limit is the guest timeout + 120 s; this one only catches a hung script.
        if (!process.waitFor(GUEST_TIMEOUT_SECONDS + 240, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor();
            fail("rdma-vm run2 did not end in time; " + tails(base));
        }
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        System.out.println("TwoHostIT: rdma-vm run2 took " + seconds + " s");

        assertEquals(0, process.exitValue(), "rdma-vm run2 failed; " + tails(base));
        assertEquals("0", read(a.resolve("exit-code")).strip(), "guest a's exit code; " + tails(base));
        assertEquals("0", read(b.resolve("exit-code")).strip(), "guest b's exit code; " + tails(base));
        String serverOut = read(a.resolve("server.out"));
        String clientOut = read(b.resolve("client.out"));
        assertTrue(serverOut.contains("rdma_server: start") && serverOut.contains("rdma_server: end 0"),
            "rdma_server did not complete its exchange:\n" + serverOut);
        assertTrue(clientOut.contains("rdma_client: start") && clientOut.contains("rdma_client: end 0"),
            "rdma_client did not complete its exchange:\n" + clientOut);
        // The peer was reached over the wire: guest b resolved 10.1.0.1 to guest a's NIC on eth0.
        assertTrue(clientOut.contains("10.1.0.1 lladdr"), "no neighbour entry for 10.1.0.1 on eth0:\n" + clientOut);
    }

    private static Path write(Path file, String... lines) throws IOException {
        return Files.writeString(file, "#!/bin/bash\n" + String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
    }

    private static String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "(no " + file + ")";
    }

    private static String tails(Path base) throws IOException {
        StringBuilder out = new StringBuilder("last lines of:\n");
        for (Path file : List.of(base.resolve("rdma-vm.log"), base.resolve("a/console.log"),
            base.resolve("b/console.log"))) {
            if (Files.exists(file)) {
                List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
                out.append("--- ").append(file).append(" ---\n");
                all.subList(Math.max(0, all.size() - 40), all.size()).forEach(l -> out.append(l).append('\n'));
            }
        }
        return out.toString();
    }
}
