package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** iproute2's {@code rdma -j res show}: the kernel's count of each RDMA object (qp, cq, mr, cm_id, pd) on the VM. */
final class RdmaRes {
    private static final Pattern COUNT = Pattern.compile("\"(qp|cq|mr|cm_id|pd)\":(\\d+)");

    private RdmaRes() {
    }

    /** The summary counts, summed over the devices (there is one, rxe0). */
    static Map<String, Integer> counts() throws IOException, InterruptedException {
        Process process = new ProcessBuilder("rdma", "-j", "res", "show").redirectErrorStream(true).start();
        String json;
        // every pipe closed here, not when the GC finds the Process: tests count this process's fds
        try (var stdin = process.getOutputStream(); var stdout = process.getInputStream()) {
            json = new String(stdout.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "rdma res show did not finish");
        assertEquals(0, process.exitValue(), "rdma -j res show: " + json);
        Map<String, Integer> counts = new LinkedHashMap<>();
        Matcher m = COUNT.matcher(json);
        while (m.find()) {
            counts.merge(m.group(1), Integer.parseInt(m.group(2)), Integer::sum);
        }
        assertTrue(counts.containsKey("qp"), "no qp count in: " + json);
        return counts;
    }
}
