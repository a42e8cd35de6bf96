package org.rdmaconnector.verbs.device;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ConnectorRuntime;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.verbs.TestProbes;

/**
 * The other host of the two-host tier: a JVM in one guest that a test in the other guest drives over a TCP control
 * connection on the virtual wire ({@code java ... PeerAgent SELF_ADDRESS SECONDS}). One command per line, one answer
 * per line ({@code OK ...} or {@code ERR ...}):
 * <ul>
 *   <li>{@code listen PORT IDLE_SECONDS ACK_TIMEOUT [greet COUNT SIZE]}: an echoing listener of the connector on
 *       SELF:PORT (or one that greets each connection with COUNT messages and answers nothing), answered once
 *       LISTENING;</li>
 *   <li>{@code stats PORT}: that listener's connections, receives, failed connections (a DISCONNECTED with a
 *       non-zero status), failed echoes, echoes held back and whether each connection's messages came in
 *       sequence;</li>
 *   <li>{@code hold PORT}, {@code release PORT MILLIS}: that listener holds its echoes back, and sends them MILLIS
 *       from now (answered at once: the driving side may cut the wire meanwhile);</li>
 *   <li>{@code stream HOST PORT [again]} / {@code trickle HOST PORT [again]}: a channel set of the connector
 *       connects to an echoing peer and keeps messages flowing (a window of them, or one a second) until the agent
 *       ends (with {@code again}: connecting again after the connection failed); {@code streams}: the messages
 *       echoed, the connections that failed (breaks) and the echoes that were wrong or late (failures);</li>
 *   <li>{@code start NAME COMMAND...}, {@code wait NAME SECONDS}, {@code sh SECONDS COMMAND...}: a shell command in
 *       this guest, in the background or bounded;</li>
 *   <li>{@code quit}: closes everything, checks this JVM's fds and the kernel's RDMA objects are back to where they
 *       were, answers, and exits (0, or 1 if something was left).</li>
 * </ul>
 * The agent exits 1 by itself after SECONDS, or when no driving side connected within 5 minutes (silence of the
 * driving side is a failure, not a hang), and 0 when the driving side closes the control connection without
 * {@code quit} (that side's result says why).
 */
public final class PeerAgent {
    /** The control port on the wire address. */
    static final int CONTROL_PORT = 7000;
    /** How long the agent waits for the driving side to connect (its guest boots and starts a JVM first). */
    private static final Duration DRIVER_WAIT = Duration.ofMinutes(5);

    private final String self;
    private final ConnectorRuntime runtime = ConnectorRuntime.standalone("peer-agent", 4);
    private final Map<Integer, CountingEcho> listeners = new ConcurrentHashMap<>();
    private final Map<String, Process> processes = new ConcurrentHashMap<>();
    private final List<AutoCloseable> clients = new CopyOnWriteArrayList<>();
    private volatile boolean ending;
    private final AtomicLong streamed = new AtomicLong();
    private final AtomicLong streamBreaks = new AtomicLong();
    private final AtomicLong streamFailures = new AtomicLong();

    private PeerAgent(String self) {
        this.self = self;
    }

    public static void main(String[] args) throws Exception {
        String self = args[0];
        long seconds = Long.parseLong(args[1]);
        Baseline before = null;
        PeerAgent agent = new PeerAgent(self);
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
                System.err.println("PeerAgent: no quit within " + seconds + " s");
                Runtime.getRuntime().halt(1);
            } catch (InterruptedException e) {
                // quit came first
            }
        }, "peer-agent-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        try (ServerSocket server = new ServerSocket()) {
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getByName(self), CONTROL_PORT));
            System.out.println("PeerAgent: control on " + self + ":" + CONTROL_PORT);
            server.setSoTimeout((int) DRIVER_WAIT.toMillis());
            try (Socket socket = acceptDriver(server);
                 BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(),
                     StandardCharsets.UTF_8));
                 PrintWriter out = new PrintWriter(socket.getOutputStream(), true, StandardCharsets.UTF_8)) {
                System.out.println("PeerAgent: driven by " + socket.getRemoteSocketAddress());
                for (String line; (line = in.readLine()) != null; ) {
                    System.out.println("PeerAgent: > " + line);
                    if (line.equals("quit")) {
                        String left = agent.close(before);
                        out.println(left.isEmpty() ? "OK" : "ERR " + left);
                        System.out.println("PeerAgent: quit " + (left.isEmpty() ? "clean" : left));
                        System.exit(left.isEmpty() ? 0 : 1);
                    }
                    String answer;
                    try {
                        answer = "OK " + agent.handle(line.split(" "));
                    } catch (Exception | AssertionError e) {
                        answer = "ERR " + e;
                    }
                    System.out.println("PeerAgent: < " + answer);
                    out.println(answer.replace("\n", "\\n"));
                    if (before == null) { // after the first exchange: the control connection's buffers are in place
                        before = Baseline.afterWarmUp().ignoringDirectMemory();
                    }
                }
            }
        }
        // the driving side's own result tells why (its tests failed, or its JVM died); exiting 0 lets rdma-vm wait
        // for that guest's reports instead of stopping it
        System.err.println("PeerAgent: the driving side went away without quit");
        System.exit(0);
    }

    private static Socket acceptDriver(ServerSocket server) throws IOException {
        try {
            Socket socket = server.accept();
            socket.setSoTimeout(0);
            return socket;
        } catch (SocketTimeoutException e) {
            System.err.println("PeerAgent: no driving side connected within " + DRIVER_WAIT.toSeconds() + " s");
            Runtime.getRuntime().halt(1);
            throw e;
        }
    }

    private String handle(String[] w) throws Exception {
        switch (w[0]) {
            case "ping":
                return "pong";
            case "listen": {
                int port = Integer.parseInt(w[1]);
                CountingEcho echo = w.length > 4 && w[4].equals("greet")
                    ? CountingEcho.greeting(Integer.parseInt(w[5]), Integer.parseInt(w[6])) : new CountingEcho();
                Activation activation = runtime.hub().activate(ListenerSettings.builder().address(self).port(port)
                    .idleTimeoutSeconds(Integer.parseInt(w[2])).ackTimeout(Integer.parseInt(w[3])).build(), echo);
                echo.activation(activation);
                listeners.put(port, echo);
                TestProbes.await("listening on " + port, Duration.ofSeconds(60),
                    () -> activation.state() == Activation.State.LISTENING);
                return activation.stateDetail();
            }
            case "stats":
                return listeners.get(Integer.parseInt(w[1])).stats();
            case "hold":
                listeners.get(Integer.parseInt(w[1])).hold();
                return "holding";
            case "release": {
                CountingEcho echo = listeners.get(Integer.parseInt(w[1]));
                long after = Long.parseLong(w[2]);
                Thread t = new Thread(() -> {
                    pause(after);
                    echo.release();
                }, "peer-agent-release");
                t.setDaemon(true);
                t.start();
                return "releasing in " + after + " ms";
            }
            case "stream":
            case "trickle": {
                ChannelSet set = ChannelSet.open(ChannelSettings.DEFAULTS, runtime.devices(), runtime.engine());
                clients.add(set);
                InetSocketAddress remote = new InetSocketAddress(w[1], Integer.parseInt(w[2]));
                boolean trickle = w[0].equals("trickle");
                boolean again = w.length > 3 && w[3].equals("again");
                RdmaEndpoint first = connect(set, remote, Duration.ofSeconds(60));
                new EchoStream(first, 0, 1024, Duration.ofSeconds(120)).run(1);
                Thread t = new Thread(() -> {
                    RdmaEndpoint endpoint = first;
                    while (true) {
                        EchoStream stream = new EchoStream(endpoint, System.nanoTime(), 1024, Duration.ofSeconds(120));
                        try {
                            stream.runUntil(() -> {
                                if (trickle) {
                                    pause(1000);
                                }
                                return ending;
                            });
                            return;
                        } catch (EchoStream.Broken | RdmaException | IllegalStateException e) {
                            // the connection failed (its requests completed with an error, or it was disconnected)
                            streamBreaks.incrementAndGet();
                            System.out.println("PeerAgent: " + w[0] + " to " + remote + " broke: " + e);
                        } catch (Exception | AssertionError e) {
                            streamFailures.incrementAndGet();
                            System.out.println("PeerAgent: " + w[0] + " to " + remote + " FAILED: " + e);
                        } finally {
                            streamed.addAndGet(stream.echoed());
                            endpoint.close();
                        }
                        if (!again || ending) {
                            return;
                        }
                        try {
                            endpoint = connect(set, remote, Duration.ofSeconds(300));
                        } catch (Exception e) {
                            streamFailures.incrementAndGet();
                            System.out.println("PeerAgent: " + w[0] + " to " + remote + " could not reconnect: " + e);
                            return;
                        }
                    }
                }, "peer-agent-" + w[0]);
                t.setDaemon(true);
                t.start();
                return "connected";
            }
            case "streams":
                return "streamed=" + streamed + " breaks=" + streamBreaks + " failures=" + streamFailures;
            case "start": {
                String name = w[1];
                Process p = new ProcessBuilder("/bin/sh", "-c", rest(w, 2)).redirectErrorStream(true)
                    .redirectOutput(Path.of(name + ".out").toFile()).start();
                processes.put(name, p);
                return "started " + name;
            }
            case "wait": {
                Process p = processes.remove(w[1]);
                if (!p.waitFor(Long.parseLong(w[2]), TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor();
                    throw new IllegalStateException(w[1] + " did not end within " + w[2] + " s: "
                        + Files.readString(Path.of(w[1] + ".out")));
                }
                return "exit=" + p.exitValue() + " " + Files.readString(Path.of(w[1] + ".out"));
            }
            case "sh":
                return Shell.run(Long.parseLong(w[1]), rest(w, 2));
            default:
                throw new IllegalArgumentException("unknown command " + w[0]);
        }
    }

    /** Connects, retrying while the peer is not listening yet (a reject or an unreachable port). */
    static RdmaEndpoint connect(ChannelSet set, InetSocketAddress remote, Duration within)
        throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        String seen = null;
        while (true) {
            try {
                return set.connect(remote, Duration.ofSeconds(20));
            } catch (RdmaException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                if (!e.getMessage().equals(seen)) {
                    seen = e.getMessage();
                    System.out.println("connecting to " + remote + " failed, retrying: " + seen);
                }
                Thread.sleep(200); // a peer not listening yet answers at once: pace the attempts
            }
        }
    }

    private static String rest(String[] w, int from) {
        return String.join(" ", Arrays.asList(w).subList(from, w.length));
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Closes everything; returns what was left over ("" if nothing). */
    private String close(Baseline before) throws Exception {
        ending = true;
        processes.values().forEach(Process::destroyForcibly);
        for (AutoCloseable c : clients) {
            c.close();
        }
        runtime.close();
        Baseline after = Baseline.awaitBack(before);
        return after.isBackTo(before) ? "" : "not back to " + before + ": " + after;
    }
}
