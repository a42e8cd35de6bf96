package org.rdmaconnector.verbs.device;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The driving side's end of the control connection to a {@link PeerAgent} in the other guest. */
final class Peer implements AutoCloseable {
    /** This guest's wire address and the other's (rdma-vm run2 sets them). */
    static final String SELF = System.getenv().getOrDefault("RDMA_VM_SELF", "10.1.0.1");
    static final String ADDRESS = System.getenv().getOrDefault("RDMA_VM_PEER", "10.1.0.2");
    private static final Pattern NUMBER = Pattern.compile("(\\w+)=(-?\\d+)");

    private final Socket socket;
    private final BufferedReader in;
    private final PrintWriter out;

    private Peer(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        this.out = new PrintWriter(socket.getOutputStream(), true, StandardCharsets.UTF_8);
    }

    /** Connects to the agent, retrying until {@code within} has passed (the other guest boots on its own time). */
    static Peer connect(Duration within) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            Socket socket = new Socket();
            try {
                socket.connect(new InetSocketAddress(ADDRESS, PeerAgent.CONTROL_PORT), 5000);
                socket.setSoTimeout((int) Duration.ofMinutes(5).toMillis()); // no answer at all is a failure
                Peer peer = new Peer(socket);
                peer.call("ping");
                return peer;
            } catch (IOException e) {
                socket.close();
                if (System.nanoTime() > deadline) {
                    throw new IOException("no peer agent at " + ADDRESS + ":" + PeerAgent.CONTROL_PORT + " within "
                        + within, e);
                }
                Thread.sleep(500); // the agent is not up yet: pace the attempts
            }
        }
    }

    /** Sends one command; returns the answer after {@code OK }, or fails with the agent's error. */
    String call(String command) throws IOException {
        out.println(command);
        String answer = in.readLine();
        if (answer == null) {
            throw new IOException("the peer agent closed the control connection after: " + command);
        }
        if (!answer.startsWith("OK")) {
            throw new AssertionError("peer agent, " + command + ": " + answer.replace("\\n", "\n"));
        }
        return answer.substring(Math.min(3, answer.length())).replace("\\n", "\n");
    }

    /** The {@code name=number} pairs of an answer (e.g. of {@code stats} or {@code sh}). */
    static Map<String, Long> numbers(String answer) {
        Map<String, Long> numbers = new LinkedHashMap<>();
        Matcher m = NUMBER.matcher(answer);
        while (m.find()) {
            numbers.putIfAbsent(m.group(1), Long.parseLong(m.group(2)));
        }
        return numbers;
    }

    /** Ends the agent: it closes everything and checks it left nothing; fails if it did. */
    void quit() throws IOException {
        call("quit");
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
