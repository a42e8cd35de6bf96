package org.rdmaconnector.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One {@code rdma-vm run2}: guest a runs {@code a.sh} and guest b runs {@code b.sh} (each in its own share under
 * {@code base}), with rxe0 on one virtual wire between them. Everything is bounded; the exit codes and both consoles
 * are left for the assertions and their messages.
 */
final class TwoGuests {
    private final Path base;
    private final int exitCode;

    private TwoGuests(Path base, int exitCode) {
        this.base = base;
        this.exitCode = exitCode;
    }

    /**
     * Boots both guests and waits for them.
     *
     * @param scriptA the body of guest a's bash script (it starts in its share)
     * @param guestTimeoutSeconds each guest's limit; rdma-vm adds its boot allowance on top
     */
    static TwoGuests run(Path base, String scriptA, String scriptB, int guestTimeoutSeconds)
        throws IOException, InterruptedException {
        GuestRun.deleteTree(base);
        Path a = Files.createDirectories(base.resolve("a"));
        Path b = Files.createDirectories(base.resolve("b"));
        Files.createDirectories(a.resolve("tmp")); // each guest JVM's java.io.tmpdir (GuestRun.guestJava)
        Files.createDirectories(b.resolve("tmp"));
        Path scriptFileA = write(a.resolve("a.sh"), a, scriptA);
        Path scriptFileB = write(b.resolve("b.sh"), b, scriptB);
        Path vmDir = Path.of(System.getProperty("rdma.vm.dir"));
        long start = System.nanoTime();
        Process process = new ProcessBuilder(vmDir.resolve("rdma-vm").toString(), "run2", "--quiet",
            "--timeout", String.valueOf(guestTimeoutSeconds), "--share-a", a.toString(), "--share-b", b.toString(),
            "--", "/bin/bash", scriptFileA.toString(), "--", "/bin/bash", scriptFileB.toString())
            .redirectErrorStream(true)
            .redirectOutput(base.resolve("rdma-vm.log").toFile())
            .start();
        // rdma-vm's own host-side limit is the guest timeout + 120 s; this one only catches a hung script.
        int exitCode;
        if (process.waitFor(guestTimeoutSeconds + 240, TimeUnit.SECONDS)) {
            exitCode = process.exitValue();
        } else {
            process.destroyForcibly();
            process.waitFor();
            exitCode = 124;
        }
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        System.out.println("TwoGuests: rdma-vm run2 in " + base.getFileName() + " took " + seconds + " s, exit "
            + exitCode);
        return new TwoGuests(base, exitCode);
    }

    private static Path write(Path file, Path share, String body) throws IOException {
        return Files.writeString(file, "#!/bin/bash\n# written by the two-host tier\ncd " + GuestRun.quote(
            share.toString()) + "\n" + body + "\n", StandardCharsets.UTF_8);
    }

    /** rdma-vm run2's exit code: 0 when both guests' payloads exited 0. */
    int exitCode() {
        return exitCode;
    }

    /** Guest {@code g}'s share ("a" or "b"). */
    Path share(String g) {
        return base.resolve(g);
    }

    /** The last lines of rdma-vm's log and both consoles, for failure messages. */
    String tails() throws IOException {
        return "last lines of:\n" + GuestRun.tails(List.of(base.resolve("rdma-vm.log"), base.resolve("a/console.log"),
            base.resolve("b/console.log")), 60);
    }
}
