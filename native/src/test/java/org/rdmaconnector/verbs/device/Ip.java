package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * iproute2's {@code ip} and {@code rdma}, for device tests that change the VM's network and RDMA links (they run as
 * root in the soft-RDMA VM).
 */
final class Ip {
    private Ip() {
    }

    static void run(String... args) throws IOException, InterruptedException {
        complete("ip", args);
    }

    /** {@code rdma ARGS}, e.g. {@code link add rxe1 type rxe netdev dummy1}. */
    static void rdma(String... args) throws IOException, InterruptedException {
        complete("rdma", args);
    }

    private static void complete(String tool, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(tool));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).inheritIO().start();
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), tool + " did not finish: " + command);
        assertEquals(0, process.exitValue(), String.join(" ", command));
    }
}
