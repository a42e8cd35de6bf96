package org.rdmaconnector.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;

/**
 * The two-host tier: {@code rdma-vm run2} boots two guests whose rxe0 devices sit on one virtual wire (10.1.0.1 and
 * 10.1.0.2), so traffic takes the RoCEv2 path through two kernels: a {@code PeerAgent} in guest a, driven over a
 * control connection by the tests of some tags in guest b's JVM, whose results become tests here. The connecting
 * sides retry until their peers listen (the guests boot independently); everything is bounded, and a guest that fails
 * or goes silent fails the test with both consoles' tails.
 */
class TwoHostIT {
    /** Guest-side limit for a run of the connector's two-host tests. */
    private static final int TESTS_TIMEOUT_SECONDS = 1200 + Integer.getInteger("rdma.soak.seconds", 120);

    /**
     * One boot of both guests, three tests in guest b's JVM against three {@code PeerAgent}s in a, one after the
     * other (each agent quits with its own leak check before the next starts):
     * <ol>
     *   <li>the wire (WireDeviceTest): rdma-core's tools with each other, interop both ways, 10,000 messages on a
     *       clean, lossy and delayed wire, a partition, a disconnect sent into a short outage;</li>
     *   <li>the seeded soak (SoakDeviceTest); {@code -Drdma.soak.seconds} (120 by default, as in CI) and
     *       {@code -Drdma.soak.seed} reach the guest's JVM;</li>
     *   <li>a peer host killed mid-stream (PeerDeathDeviceTest), which asks rdma-vm to kill guest a's qemu, so it
     *       comes last.</li>
     * </ol>
     * One boot instead of one per test saves CI a boot of both guests and their JVMs' start.
     */
    @TestFactory
    Stream<DynamicNode> theWireThenASeededSoakThenAPeerHostKilledMidStream() throws Exception {
        skipIfAsked();
        return agentAndTests("two-hosts", "wire | soak | peer-death", 3,
            "-Drdma.soak.seconds=" + Long.getLong("rdma.soak.seconds", 120)
                + " -Drdma.soak.seed=" + Long.getLong("rdma.soak.seed", 20261201L));
    }

    /**
     * Runs {@code agents} {@code PeerAgent}s one after the other in guest a (the next only after the one before quit
     * clean) and the tests tagged {@code tags} in guest b, and turns the tests' results into tests here.
     */
    private static Stream<DynamicNode> agentAndTests(String name, String tags, int agents, String... testerJvmArgs)
        throws Exception {
        Path base = base().resolve(name);
        String classPath = System.getProperty("java.class.path");
        String agent = GuestRun.guestJava(base.resolve("a"), classPath, "256m")
            + " org.rdmaconnector.verbs.device.PeerAgent \"$RDMA_VM_SELF\" " + TESTS_TIMEOUT_SECONDS;
        String agentScript = (agent + " || exit $?\n").repeat(agents);
        String tests = "exec " + GuestRun.guestJava(base.resolve("b"), classPath, "384m") + " "
            + String.join(" ", testerJvmArgs) + " " + GuestRun.consoleLauncher(tags);
        TwoGuests run = TwoGuests.run(base, agentScript, tests, TESTS_TIMEOUT_SECONDS);
        List<DynamicNode> nodes = new ArrayList<>();
        List<GuestResults.Case> cases = GuestResults.read(run.share("b").resolve("reports"));
        nodes.add(dynamicTest("both guests ran and ended cleanly", () -> {
            if (cases.isEmpty()) {
                fail("no test reports from guest b (rdma-vm run2 exit " + run.exitCode() + "); " + run.tails());
            }
            assertEquals(0, run.exitCode(), "rdma-vm run2 (each agent checks it left nothing when it quits); "
                + run.tails());
        }));
        nodes.addAll(GuestResults.asTests(cases, "guest b"));
        return nodes.stream();
    }

    private static Path base() {
        return Path.of(System.getProperty("rdma.vm.twohost.share"));
    }

    private static void skipIfAsked() {
        if (Boolean.getBoolean("skipSoftRdma")) {
            String reason = "THE TWO-HOST VM TIER WAS SKIPPED (-DskipSoftRdma): no test ran across two kernels";
            System.err.println("\n*** " + reason + " ***\n");
            Assumptions.abort(reason);
        }
    }
}
