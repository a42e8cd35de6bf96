package org.rdmaconnector.it.wildfly;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The managed WildFly's JVM as seen from outside, on the same host and user: its threads and fds ({@code /proc}),
 * and, through {@code jcmd}, a full GC and how many class loaders have a class of a given name loaded.
 */
final class ServerProcess {
    private final long pid;
    private final Path jcmd;

    private ServerProcess(long pid) {
        this.pid = pid;
        this.jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    }

    /** The server JVM whose jboss.server.base.dir is {@code baseDir}. */
    static ServerProcess withBaseDir(Path baseDir) {
        String wanted = "-Djboss.server.base.dir=" + baseDir;
        List<ProcessHandle> found = ProcessHandle.allProcesses()
            .filter(p -> p.info().commandLine().map(c -> c.contains(wanted) && c.contains("jboss-modules.jar"))
                .orElse(false))
            .toList();
        if (found.size() != 1) {
            throw new AssertionError("expected one WildFly JVM with " + wanted + ", found " + found.size());
        }
        return new ServerProcess(found.get(0).pid());
    }

    long pid() {
        return pid;
    }

    /**
     * Threads of the server, but those of its "ServerService Thread Pool" (the management and deployment pool: it
     * grows while deployments run and shrinks on its own minutes later, so it would hide a leak against a baseline).
     */
    int threads() throws IOException {
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            return (int) tasks.filter(task -> {
                try {
                    return !Files.readString(task.resolve("comm")).startsWith("ServerService T"); // comm: 15 chars
                } catch (IOException e) {
                    return false; // ended meanwhile
                }
            }).count();
        }
    }

    /** Open fds, but those of {@link #libffiFds()}. */
    int fds() throws IOException {
        return count(Path.of("/proc", Long.toString(pid), "fd")) - libffiFds();
    }

    /**
     * Open fds of libffi's closure memory ({@code /tmp/ffiXXXXXX (deleted)}): each copy of JNA's native library
     * (one per deployment of the rar, which ships JNA) opens one for its direct-mapped methods and never closes it.
     */
    int libffiFds() throws IOException {
        try (Stream<Path> entries = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            return (int) entries.filter(fd -> {
                try {
                    return Files.readSymbolicLink(fd).getFileName().toString().startsWith("ffi");
                } catch (IOException e) {
                    return false; // closed meanwhile
                }
            }).count();
        }
    }

    private static int count(Path dir) throws IOException {
        try (Stream<Path> entries = Files.list(dir)) {
            return (int) entries.count();
        }
    }

    /** A full GC in the server (classes of unreachable class loaders are unloaded). */
    void gc() throws Exception {
        jcmd("GC.run");
    }

    /** How many class loaders of the server have a class named {@code className} loaded now. */
    int loadedCopies(String className) throws Exception {
        String suffix = " " + className;
        return (int) jcmd("VM.classloaders", "show-classes=true", "fold=false").lines()
            .filter(l -> l.endsWith(suffix))
            .count();
    }

    private String jcmd(String... command) throws Exception {
        List<String> line = new java.util.ArrayList<>(List.of(jcmd.toString(), Long.toString(pid)));
        line.addAll(List.of(command));
        Path out = Files.createTempFile("jcmd", ".txt");
        try {
            Process process = new ProcessBuilder(line).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(line + " did not finish within 60 s");
            }
            String text = Files.readString(out);
            if (process.exitValue() != 0) {
                throw new AssertionError(line + " failed (" + process.exitValue() + "): " + text);
            }
            return text;
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
