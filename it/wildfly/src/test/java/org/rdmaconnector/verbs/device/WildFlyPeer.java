package org.rdmaconnector.verbs.device;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ConnectorRuntime;

/**
 * The other host of WildFlyOnRxeIT's two-guest boot: one JVM in guest b that talks across the wire to the MDBs of
 * the WildFly in guest a ({@code java ... WildFlyPeer HOST PORT HTTP_BASE CONNECTIONS MESSAGES SEED TOOL_RUNS
 * SECONDS OUT}). It waits, bounded, until a's activations are LISTENING (polling the app's
 * {@code /rdma/activations}); then CONNECTIONS times, the connector's channel set connects to the MDBs' listener and
 * sends MESSAGES seeded messages, each echo checked ({@link EchoStream}); then rdma-core's {@code rdma_client} runs
 * TOOL_RUNS times against the same listener. OUT gets one line per connection with what was sent (count, bytes,
 * CRC-32 of the bytes in order), for the host to compare with what the MDBs recorded. It lives in this package to use
 * native's test helpers ({@link EchoStream}, {@link PeerAgent#connect}). Exit 0 when everything passed, 1 otherwise.
 */
public final class WildFlyPeer {
    private static final int MAX_SIZE = 1024; // the MDBs' receiveBufferSize

    private WildFlyPeer() {
    }

    public static void main(String[] args) throws Exception {
        InetSocketAddress listener = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        String activations = args[2] + "activations";
        int connections = Integer.parseInt(args[3]);
        int messages = Integer.parseInt(args[4]);
        long seed = Long.parseLong(args[5]);
        int toolRuns = Integer.parseInt(args[6]);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[7]));
        Path out = Path.of(args[8]);
        try {
            long waited = awaitListening(activations, deadline);
            System.out.println("WildFlyPeer: both activations LISTENING after " + waited + " ms of polling "
                + activations);
            List<String> sent = new ArrayList<>();
            try (ConnectorRuntime runtime = ConnectorRuntime.standalone("wildfly-peer", 2);
                 ChannelSet set = ChannelSet.open(ChannelSettings.DEFAULTS, runtime.devices(), runtime.engine())) {
                for (int c = 0; c < connections; c++) {
                    long start = System.nanoTime();
                    RdmaEndpoint endpoint = PeerAgent.connect(set, listener, Duration.ofSeconds(30));
                    long connected = System.nanoTime();
                    EchoStream.Figures figures;
                    try {
                        figures = new EchoStream(endpoint, seed + c, MAX_SIZE, Duration.ofSeconds(60)).run(messages);
                        sent.add(sentLine(seed + c, messages) + " from " + endpoint.localAddress());
                    } finally {
                        endpoint.close();
                    }
                    System.out.println("WildFlyPeer: connection " + c + " to " + listener + ": connected in "
                        + (connected - start) / 1_000_000 + " ms; " + figures + ", every echo intact and in its "
                        + "place; closed " + (System.nanoTime() - connected - figures.nanos()) / 1_000_000
                        + " ms after the last echo");
                }
            }
            Files.write(out, sent, StandardCharsets.UTF_8);
            for (int r = 0; r < toolRuns; r++) {
                rdmaClient(listener);
            }
            System.out.println("WildFlyPeer: OK");
            System.exit(0);
        } catch (Exception | AssertionError e) {
            System.out.println("WildFlyPeer: FAILED: " + e);
            e.printStackTrace(System.out);
            System.exit(1);
        }
    }

    /** {@code sent seed S messages M bytes B crc32 X}: what a stream with {@code seed} sends, as the MDBs print it. */
    static String sentLine(long seed, int messages) {
        CRC32 crc = new CRC32();
        long bytes = 0;
        for (int i = 0; i < messages; i++) {
            byte[] m = EchoStream.message(seed, i, MAX_SIZE);
            crc.update(m);
            bytes += m.length;
        }
        return "sent seed " + seed + " received " + messages + " bytes " + bytes + " crc32 "
            + Long.toHexString(crc.getValue());
    }

    /** Polls the app's activations until two of them are LISTENING; returns how long that took. */
    private static long awaitListening(String url, long deadline) throws InterruptedException, IOException {
        long start = System.nanoTime();
        String last = "(no answer yet)";
        while (true) {
            try {
                HttpURLConnection http = (HttpURLConnection) URI.create(url).toURL().openConnection();
                http.setConnectTimeout(5000);
                http.setReadTimeout(30_000);
                if (http.getResponseCode() == 200) {
                    try (InputStream in = http.getInputStream()) {
                        last = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                    }
                    if (last.lines().filter(l -> l.contains(" LISTENING ")).count() == 2) {
                        return (System.nanoTime() - start) / 1_000_000;
                    }
                } else {
                    last = "HTTP " + http.getResponseCode();
                }
                http.disconnect();
            } catch (IOException e) {
                last = e.toString(); // the server is not up yet
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("the MDBs' activations were not LISTENING at " + url + " in time; last: "
                    + last);
            }
            Thread.sleep(500); // a server still booting: pace the polls
        }
    }

    /** One run of rdma-core's rdma_client (16 bytes sent, the echo awaited), bounded; fails unless it exits 0. */
    private static void rdmaClient(InetSocketAddress listener) throws IOException, InterruptedException {
        long start = System.nanoTime();
        Process p = new ProcessBuilder("rdma_client", "-s", listener.getHostString(), "-p",
            String.valueOf(listener.getPort())).redirectErrorStream(true).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            throw new AssertionError("rdma_client did not end within 60 s: "
                + new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        System.out.println("WildFlyPeer: rdma_client -s " + listener.getHostString() + " exit " + p.exitValue()
            + " in " + (System.nanoTime() - start) / 1_000_000 + " ms: " + output.replace('\n', '|'));
        if (p.exitValue() != 0) {
            throw new AssertionError("rdma_client exited " + p.exitValue() + ": " + output);
        }
    }
}
