package org.rdmaconnector.it.glassfish;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * GlassFish's admin CLI against the managed domain, run as its own small JVM (the jar the asadmin script runs, with a
 * heap limit the script would not give it).
 */
final class Asadmin {
    private static final long TIMEOUT_SECONDS = 180;

    private final Path glassfishHome;
    private final int adminPort;

    Asadmin(Path glassfishHome, int adminPort) {
        this.glassfishHome = glassfishHome;
        this.adminPort = adminPort;
    }

    /** What one command printed (stdout and stderr) and its exit code. */
    record Result(List<String> command, int exitCode, String output) {
        boolean succeeded() {
            return exitCode == 0;
        }

        @Override
        public String toString() {
            return "asadmin " + String.join(" ", command) + " -> exit " + exitCode + ":\n" + output;
        }
    }

    Result run(String... command) throws IOException, InterruptedException {
        Path cli = glassfishHome.resolve("glassfish/lib/client/appserver-cli.jar");
        List<String> line = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-jar", cli.toString(),
            "--host", "localhost", "--port", Integer.toString(adminPort), "--interactive=false"));
        line.addAll(List.of(command));
        Path output = Files.createTempFile("asadmin", ".txt");
        try {
            Process process = new ProcessBuilder(line).redirectErrorStream(true).redirectOutput(output.toFile())
                .start();
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException("asadmin " + String.join(" ", command) + " took over " + TIMEOUT_SECONDS + " s");
            }
            return new Result(List.of(command), process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(output);
        }
    }
}
