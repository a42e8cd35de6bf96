package org.rdmaconnector.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * README command 1 end to end, in the soft-RDMA VM: {@code example/run --vm --no-build} boots WildFly with the rar
 * and the example, the client's messages come back intact from the echo service, rdma-core's own rdma_client gets its
 * echo, and the report's figures are present and sane.
 */
class ExampleOnRxeIT {
    private static final int MESSAGES = 200;

    @Test
    void theExampleEchoesOverRxeAndReportsItsLatencies() throws Exception {
        if (Boolean.getBoolean("skipSoftRdma")) {
            String reason = "THE EXAMPLE-ON-RXE TEST WAS SKIPPED (-DskipSoftRdma): example/run was not run";
            System.err.println("\n*** " + reason + " ***\n");
            Assumptions.abort(reason);
        }
        Path script = Path.of(System.getProperty("rdma.example.script"));
        Path output = Path.of(System.getProperty("rdma.example.output"));
        Files.createDirectories(output.getParent());
        Process process = new ProcessBuilder("bash", script.toString(), "--vm", "--no-build", "--messages",
            String.valueOf(MESSAGES), "--size", "256").redirectErrorStream(true).redirectOutput(output.toFile()).start();
        if (!process.waitFor(25, TimeUnit.MINUTES)) {
            process.destroy(); // SIGTERM: the script stops the VM it started
            process.waitFor(30, TimeUnit.SECONDS);
            throw new AssertionError("example/run did not finish in 25 minutes:\n" + tail(output));
        }
        String out = Files.readString(output, StandardCharsets.UTF_8).replaceAll("\u001B\\[[0-9;]*m", "");
        assertEquals(0, process.exitValue(), () -> "example/run failed:\n" + tail(output));
        assertTrue(out.contains(MESSAGES + " x 256 bytes, " + MESSAGES + " echoed back intact"), out);
        assertTrue(out.contains("rdma-core's own client got its message echoed (rdma_client: end 0)"), out);
        Matcher rate = Pattern.compile("throughput\\s+([0-9.]+) messages/s").matcher(out);
        assertTrue(rate.find() && Double.parseDouble(rate.group(1)) > 0, out);
        Matcher table = Pattern.compile("p50\\s+p90\\s+p99\\s+max\\s*\\n\\s+([0-9.]+)\\s+([0-9.]+)\\s+([0-9.]+)\\s+"
            + "([0-9.]+)").matcher(out);
        assertTrue(table.find(), out);
        double p50 = Double.parseDouble(table.group(1));
        double p90 = Double.parseDouble(table.group(2));
        double p99 = Double.parseDouble(table.group(3));
        double max = Double.parseDouble(table.group(4));
        assertTrue(0 < p50 && p50 <= p90 && p90 <= p99 && p99 <= max, "percentiles in order: " + table.group());
        assertTrue(max < 30_000_000, "no round trip took the whole client timeout: " + max + " us");
    }

    private static String tail(Path file) {
        try {
            List<String> lines = Files.readAllLines(file);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
        } catch (Exception e) {
            return "(" + e + ")";
        }
    }
}
