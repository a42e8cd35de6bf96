package org.rdmaconnector.it.glassfish;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The domain's server.log (GlassFish 7's ODL format) from a mark on: its records with level, message id, logger
 * and full text (message and stack trace).
 */
final class ServerLog {
    /** {@code [2026-11-30T17:31:37.527026Z] [GF 7.0.20] [INFO] [msg-id] [logger] [tid: ...] [levelValue: 800] [[} */
    private static final Pattern HEADER = Pattern.compile(
        "^\\[(\\d{4}-\\d\\d-\\d\\dT[^\\]]*)\\] \\[[^\\]]*\\] \\[(\\w+)\\] \\[([^\\]]*)\\] \\[([^\\]]*)\\]",
        Pattern.MULTILINE);

    private final Path file;

    ServerLog(Path file) {
        this.file = file;
    }

    record Entry(String level, String messageId, String logger, String text) {
        boolean isWarningOrWorse() {
            return level.equals("WARNING") || level.equals("SEVERE");
        }

        /** The header, the message and each exception line with its first frame: enough to name a failure. */
        String summary(int maxLines) {
            List<String> kept = new ArrayList<>();
            boolean previousWasFrame = false;
            for (String line : text.split("\n")) {
                boolean frame = line.startsWith("\tat ") || line.startsWith("\t... ");
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
    long mark() throws IOException {
        return Files.exists(file) ? Files.size(file) : 0;
    }

    List<Entry> since(long mark) throws IOException {
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
        Matcher m = HEADER.matcher(text);
        int start = -1;
        String[] header = null;
        while (m.find()) {
            if (header != null) {
                entries.add(new Entry(header[0], header[1], header[2], text.substring(start, m.start()).strip()));
            }
            header = new String[] {m.group(2), m.group(3), m.group(4)};
            start = m.start();
        }
        if (header != null) {
            entries.add(new Entry(header[0], header[1], header[2], text.substring(start).strip()));
        }
        return entries;
    }

    /** Waits (the server writes its log asynchronously) until a record since the mark matches. */
    boolean await(long mark, Predicate<Entry> wanted, Duration timeout) throws IOException, InterruptedException {
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
}
