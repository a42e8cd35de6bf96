package org.rdmaconnector.it.wildfly;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.IntStream;

/**
 * A code block of the repository's README.md, taken as written so that a test runs what users read: the one fenced
 * block between the lines {@code <!-- begin NAME ... -->} and {@code <!-- end NAME -->}.
 */
final class ReadmeBlock {
    private ReadmeBlock() {
    }

    /** The README the build points at ({@code rdma.readme}, set by failsafe). */
    static Path readme() {
        String path = System.getProperty("rdma.readme");
        if (path == null) {
            throw new IllegalStateException("system property rdma.readme (the README.md to read) is not set");
        }
        return Path.of(path);
    }

    /** The text of the fenced block named {@code name} in {@link #readme()}, without its fence lines. */
    static String named(String name) throws IOException {
        Path readme = readme();
        List<String> lines = Files.readAllLines(readme);
        String beginMarker = "<!-- begin " + name + " "; // then "-->" or a note for the reader, then "-->"
        String endMarker = "<!-- end " + name + " -->";
        int begin = lineIndex(lines, 0, l -> l.startsWith(beginMarker), readme, beginMarker + "...-->");
        int end = lineIndex(lines, begin + 1, l -> l.equals(endMarker), readme, endMarker);
        List<String> between = lines.subList(begin + 1, end);
        List<Integer> fences = IntStream.range(0, between.size())
            .filter(i -> between.get(i).strip().startsWith("```")).boxed().toList();
        if (fences.size() != 2) {
            throw new IllegalStateException(readme + ": block '" + name + "' must hold exactly one fenced code block "
                + "between its begin and end markers; found " + fences.size() + " fence lines");
        }
        return String.join("\n", between.subList(fences.get(0) + 1, fences.get(1))) + "\n";
    }

    private static int lineIndex(List<String> lines, int from, Predicate<String> wanted, Path readme, String what) {
        for (int i = from; i < lines.size(); i++) {
            if (wanted.test(lines.get(i).strip())) {
                return i;
            }
        }
        throw new IllegalStateException(readme + ": no line " + what + " (after line " + from + ")");
    }
}
