package org.rdmaconnector.bench;

import java.net.InetSocketAddress;
import java.time.Duration;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.verbs.CmEvent;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.ConnectionParameters;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.PortSpace;
import org.rdmaconnector.verbs.ProtectionDomain;
import org.rdmaconnector.verbs.QueuePairCapabilities;

/**
 * The RDMA CM connect/disconnect loop through rdma-native, step for step what {@code bench/src/main/c/
 * cm_connect_loop.c} does in C (see there), after {@code WARMUP} untimed connections for the JIT.
 * Usage: {@code CmConnectLoop ADDRESS PORT CONNECTIONS WARMUP}.
 */
public final class CmConnectLoop {
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final QueuePairCapabilities CAPS = QueuePairCapabilities.of(4, 4);

    private CmConnectLoop() {
    }

    private static CmEvent expect(EventChannel channel, CmEventType type) {
        CmEvent event = channel.getEvent();
        if (event.type() != type) {
            throw new IllegalStateException("expected " + type + ", got " + event + " status " + event.status());
        }
        return event;
    }

    public static void main(String[] args) {
        if (args.length != 4) {
            System.err.println("usage: CmConnectLoop ADDRESS PORT CONNECTIONS WARMUP");
            System.exit(2);
        }
        InetSocketAddress address = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        int connections = Integer.parseInt(args[2]);
        int warmup = Integer.parseInt(args[3]);
        ConnectionParameters param = ConnectionParameters.defaults();
        try (EventChannel serverChannel = EventChannel.create(); EventChannel clientChannel = EventChannel.create()) {
            CmId listener = serverChannel.createId(PortSpace.TCP);
            listener.bind(address);
            listener.listen(16);
            DeviceContext context = null;
            ProtectionDomain pd = null;
            CompletionQueue clientCq = null;
            CompletionQueue serverCq = null;
            long start = 0;
            long jit = -1;
            for (int i = 0; i < warmup + connections; i++) {
                if (i == warmup) {
                    start = System.nanoTime();
                    jit = JitTime.millis();
                }
                CmId client = clientChannel.createId(PortSpace.TCP);
                client.resolveAddress(null, address, TIMEOUT);
                expect(clientChannel, CmEventType.ADDR_RESOLVED);
                client.resolveRoute(TIMEOUT);
                expect(clientChannel, CmEventType.ROUTE_RESOLVED);
                if (pd == null) {
                    context = client.openDeviceContext();
                    pd = context.allocateProtectionDomain();
                    clientCq = context.createCompletionQueue(16, null, 0);
                    serverCq = context.createCompletionQueue(16, null, 0);
                }
                client.createQueuePair(pd, clientCq, clientCq, CAPS);
                client.connect(param);
                CmId server = expect(serverChannel, CmEventType.CONNECT_REQUEST).id();
                server.createQueuePair(pd, serverCq, serverCq, CAPS);
                server.accept(param);
                expect(clientChannel, CmEventType.ESTABLISHED);
                expect(serverChannel, CmEventType.ESTABLISHED);
                client.disconnect();
                expect(serverChannel, CmEventType.DISCONNECTED);
                server.disconnect();
                expect(clientChannel, CmEventType.DISCONNECTED);
                server.close(); // destroys its QP, then the id
                client.close();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            System.out.printf("Java cm loop: %d connections in %.3f s = %.1f connections/s%n", connections, seconds,
                connections / seconds);
            System.out.printf("JIT compilation in the timed part: %d ms%n", JitTime.since(jit));
            if (context != null) {
                context.close();
            }
        }
    }
}
