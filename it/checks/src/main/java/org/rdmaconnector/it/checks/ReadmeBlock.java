package org.rdmaconnector.it.checks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A block of the repository's README.md that a test runs as written: the fenced code block right after the marker
 * line {@code <!-- tested: NAME -->}, so the README keeps the one copy.
 */
public final class ReadmeBlock {
    private ReadmeBlock() {
    }

    /** The README the build names in the system property {@code rdma.readme}. */
    public static Path readme() {
        String path = System.getProperty("rdma.readme");
        if (path == null) {
            throw new IllegalStateException("system property rdma.readme (the path of README.md) is not set");
        }
        return Path.of(path);
    }

    /** The lines of the block marked {@code name}, without the fences and the fence's indentation. */
    public static List<String> lines(String name) throws IOException {
        Path readme = readme();
        List<String> all = Files.readAllLines(readme, StandardCharsets.UTF_8);
        String marker = "<!-- tested: " + name + " -->";
        int at = all.indexOf(marker);
        if (at < 0) {
            throw new IllegalStateException(readme + " has no line '" + marker + "'");
        }
        if (at + 1 >= all.size() || !all.get(at + 1).startsWith("```")) {
            throw new IllegalStateException(readme + ": the line after '" + marker + "' does not open a code block");
        }
        List<String> block = new ArrayList<>();
        for (int i = at + 2; i < all.size(); i++) {
            if (all.get(i).startsWith("```")) {
                return block;
            }
            block.add(all.get(i));
        }
        throw new IllegalStateException(readme + ": the code block after '" + marker + "' is not closed");
    }

    /** The block as one text, each line ending with a newline. */
    public static String text(String name) throws IOException {
        return String.join("\n", lines(name)) + "\n";
    }
}
