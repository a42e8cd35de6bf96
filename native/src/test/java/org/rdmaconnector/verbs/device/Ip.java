package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** iproute2's {@code ip}, for device tests that change the VM's network (they run as root in the soft-RDMA VM). */
final class Ip {
    private Ip() {
    }

    static void run(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("ip"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).inheritIO().start();
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "ip did not finish: " + command);
        assertEquals(0, process.exitValue(), String.join(" ", command));
    }
}
