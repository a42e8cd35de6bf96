package org.rdmaconnector.verbs.device;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;

/** A shell command in this guest (the VM tests run as root there), bounded in time. */
final class Shell {
    private Shell() {
    }

    /**
     * Runs {@code command} with {@code /bin/sh -c}; its output (stdout and stderr) goes to a file, so a command that
     * hangs cannot block the reading side past the bound.
     *
     * @return {@code "exit=N "} followed by the output
     * @throws IllegalStateException when it does not end within {@code seconds} (it is killed)
     */
    static String run(long seconds, String command) throws IOException, InterruptedException {
        File output = File.createTempFile("shell", ".out");
        try {
            Process p = new ProcessBuilder("/bin/sh", "-c", command).redirectErrorStream(true)
                .redirectOutput(output).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
            if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new IllegalStateException(command + " did not end within " + seconds + " s:\n"
                    + Files.readString(output.toPath(), StandardCharsets.UTF_8));
            }
            return "exit=" + p.exitValue() + " " + Files.readString(output.toPath(), StandardCharsets.UTF_8);
        } finally {
            Files.deleteIfExists(output.toPath());
        }
    }
}
