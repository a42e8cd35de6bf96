package org.rdmaconnector.it.checks;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A server's log file from a mark on: its records with level, message id, logger and full text (message and stack
 * trace), in GlassFish's and Payara's ODL format or Open Liberty's basic {@code messages.log} format.
 */
public final class ServerLog {
    /** How a record starts, and which groups of that match are its level, message id and logger. */
    private record Format(Pattern header, int level, int messageId, int logger, Map<String, String> levels) {
    }

    /** {@code [2026-11-30T17:31:37.527026Z] [GF 7.0.20] [INFO] [msg-id] [logger] [tid: ...] [levelValue: 800] [[} */
    private static final Format ODL = new Format(Pattern.compile(
        "^\\[(\\d{4}-\\d\\d-\\d\\dT[^\\]]*)\\] \\[[^\\]]*\\] \\[(\\w+)\\] \\[([^\\]]*)\\] \\[([^\\]]*)\\]",
        Pattern.MULTILINE), 2, 3, 4, Map.of());

    /**
     * {@code [12/2/26, 6:00:12:058 UTC] 0000001f org.rdmaconnector.ra.RdmaResourceAdapter   I CWWKZ0001I: ...}: the
     * logger column is cut to its last 60 characters, the level is one letter (A audit, I, W, E, F fatal, O and R
     * the standard streams).
     */
    private static final Format LIBERTY = new Format(Pattern.compile(
        "^\\[(\\d+/\\d+/\\d+, [^\\]]+)\\] ([0-9a-f]{8}) (\\S+)\\s+([AIWEFORDC]) (?:([A-Z][A-Z0-9]{3,4}\\d{4}[A-Z]):)?",
        Pattern.MULTILINE), 4, 5, 3,
        Map.of("A", "AUDIT", "I", "INFO", "W", "WARNING", "E", "SEVERE", "F", "SEVERE", "O", "SYSOUT", "R", "SYSERR",
            "D", "FINE", "C", "CONFIG"));

    private final Path file;
    private final Format format;

    private ServerLog(Path file, Format format) {
        this.file = file;
        this.format = format;
    }

    /** GlassFish's or Payara's {@code domains/DOMAIN/logs/server.log} (ODL format). */
    public static ServerLog odl(Path file) {
        return new ServerLog(file, ODL);
    }

    /** Open Liberty's {@code logs/messages.log} (the default, basic format). */
    public static ServerLog liberty(Path file) {
        return new ServerLog(file, LIBERTY);
    }

    /** One record; {@code level} is a java.util.logging name (Liberty's audit records: AUDIT). */
    public record Entry(String level, String messageId, String logger, String text) {
        public boolean isWarningOrWorse() {
            return level.equals("WARNING") || level.equals("SEVERE");
        }

        /** Whether it was logged by, or names, the connector's code. */
        public boolean isOurs() {
            return logger.startsWith("org.rdmaconnector") || text.contains("org.rdmaconnector");
        }

        /** The header, the message and each exception line with its first frame: enough to name a failure. */
        public String summary(int maxLines) {
            List<String> kept = new ArrayList<>();
            boolean previousWasFrame = false;
            for (String line : text.split("\n")) {
                boolean frame = line.startsWith("\tat ") || line.startsWith("\t... ") || line.startsWith("\t\tat ");
                if (!frame || !previousWasFrame) {
                    kept.add(line);
                }
                previousWasFrame = frame;
                if (kept.size() >= maxLines) {
                    kept.add("\t[...]");
                    break;
                }
            }
            return String.join("\n", kept);
        }
    }

    /** Where the log ends now: records written later are "since" this mark. */
    public long mark() throws IOException {
        return Files.exists(file) ? Files.size(file) : 0;
    }

    public List<Entry> since(long mark) throws IOException {
        if (!Files.exists(file)) {
            return List.of();
        }
        String text;
        try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
            long length = in.length();
            if (length < mark) {
                throw new IllegalStateException(file + " shrank below the mark (rotated?): " + length + " < " + mark);
            }
            byte[] bytes = new byte[Math.toIntExact(length - mark)];
            in.seek(mark);
            in.readFully(bytes);
            text = new String(bytes, StandardCharsets.UTF_8);
        }
        List<Entry> entries = new ArrayList<>();
        Matcher m = format.header.matcher(text);
        int start = -1;
        String[] header = null;
        while (m.find()) {
            if (header != null) {
                entries.add(new Entry(header[0], header[1], header[2], text.substring(start, m.start()).strip()));
            }
            String level = m.group(format.level);
            String messageId = m.group(format.messageId);
            header = new String[] {format.levels.getOrDefault(level, level), messageId == null ? "" : messageId,
                m.group(format.logger)};
            start = m.start();
        }
        if (header != null) {
            entries.add(new Entry(header[0], header[1], header[2], text.substring(start).strip()));
        }
        return entries;
    }

    /** The warnings and errors since the mark, summarized, or why the log cannot be read: for failure messages. */
    public String warningsSince(long mark) {
        try {
            return describe(since(mark).stream().filter(Entry::isWarningOrWorse).toList());
        } catch (IOException | RuntimeException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }

    /** Waits (servers write their logs asynchronously) until a record since the mark matches. */
    public boolean await(long mark, Predicate<Entry> wanted, Duration timeout) throws IOException,
        InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (since(mark).stream().anyMatch(wanted)) {
                return true;
            }
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(200);
        }
    }

    /** Each record's {@linkplain Entry#summary summary}, separated by blank lines. */
    public static String describe(List<Entry> entries) {
        return entries.stream().map(e -> e.summary(40)).collect(Collectors.joining("\n\n"));
    }
}
