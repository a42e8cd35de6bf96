package org.rdmaconnector.bench;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.verbs.Access;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.ConnectionParameters;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.MemoryRegion;
import org.rdmaconnector.verbs.PortSpace;
import org.rdmaconnector.verbs.ProtectionDomain;
import org.rdmaconnector.verbs.QueuePair;
import org.rdmaconnector.verbs.QueuePairCapabilities;
import org.rdmaconnector.verbs.WorkCompletions;

/**
 * {@code read_post.c} on rdma-native's verbs: one RDMA READ at a time, busy polling a CQ without a completion channel
 * in the posting thread, no engine. It prints how long {@code ibv_post_send} took, the round trip, and how many READs
 * were complete when the post returned, the same line as the C program, so the two compare on one device in one
 * boot; {@code ConnectorPerftest read_lat} adds the connector around the same READ. The server hands its region's
 * address and rkey over in the accept's private data (8 + 4 bytes in the machine's order, as the C program).
 * Usage: {@code RawRead server|client ADDRESS PORT SIZE ITERS WARMUP}.
 */
public final class RawRead {
    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    private RawRead() {
    }

    public static void main(String[] args) {
        if (args.length != 6 || !Arrays.asList("server", "client").contains(args[0])) {
            System.err.println("usage: RawRead server|client ADDRESS PORT SIZE ITERS WARMUP");
            System.exit(2);
        }
        InetSocketAddress address = new InetSocketAddress(args[1], Integer.parseInt(args[2]));
        int size = Integer.parseInt(args[3]);
        int iters = Integer.parseInt(args[4]);
        int warmup = Integer.parseInt(args[5]);
        try (EventChannel events = EventChannel.create()) {
            CmId id = events.createId(PortSpace.TCP);
            if (args[0].equals("server")) {
                serve(events, id, address, size);
            } else {
                read(events, id, address, size, iters, warmup);
            }
        }
    }

    /** A registered buffer of {@code size} bytes, page-aligned as the C program's. */
    private static MemoryRegion region(ProtectionDomain pd, int size, EnumSet<Access> access) {
        int pages = (size + 4095) / 4096;
        return pd.register(ByteBuffer.allocateDirect((pages + 1) * 4096).alignedSlice(4096).limit(size), access);
    }

    private static void serve(EventChannel events, CmId listener, InetSocketAddress address, int size) {
        listener.bind(address);
        listener.listen(1);
        System.out.println("ready");
        if (!events.awaitEvent(TIMEOUT)) {
            throw new IllegalStateException("no client within " + TIMEOUT);
        }
        CmId id = RcPingPong.expect(events, CmEventType.CONNECT_REQUEST).id();
        try (DeviceContext context = id.openDeviceContext()) {
            ProtectionDomain pd = context.allocateProtectionDomain();
            CompletionQueue cq = context.createCompletionQueue(8, null, 0);
            id.createQueuePair(pd, cq, cq, QueuePairCapabilities.of(4, 4));
            MemoryRegion region = region(pd, size, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
            ByteBuffer handover = ByteBuffer.allocate(12).order(ByteOrder.nativeOrder())
                .putLong(region.remoteAddress()).putInt(region.rkey());
            id.accept(ConnectionParameters.defaults().withPrivateData(handover.array()));
            RcPingPong.expect(events, CmEventType.ESTABLISHED);
            if (!events.awaitEvent(Duration.ofSeconds(600))) {
                throw new IllegalStateException("the client did not disconnect");
            }
            RcPingPong.expect(events, CmEventType.DISCONNECTED);
        }
    }

    private static void read(EventChannel events, CmId id, InetSocketAddress address, int size, int iters,
                             int warmup) {
        id.resolveAddress(null, address, TIMEOUT);
        RcPingPong.expect(events, CmEventType.ADDR_RESOLVED);
        id.resolveRoute(TIMEOUT);
        RcPingPong.expect(events, CmEventType.ROUTE_RESOLVED);
        try (DeviceContext context = id.openDeviceContext(); WorkCompletions wcs = new WorkCompletions(4)) {
            ProtectionDomain pd = context.allocateProtectionDomain();
            CompletionQueue cq = context.createCompletionQueue(8, null, 0);
            QueuePair qp = id.createQueuePair(pd, cq, cq, QueuePairCapabilities.of(4, 4));
            MemoryRegion local = region(pd, size, EnumSet.of(Access.LOCAL_WRITE));
            id.connect(ConnectionParameters.defaults());
            ByteBuffer handover = ByteBuffer.wrap(RcPingPong.expect(events, CmEventType.ESTABLISHED).privateData())
                .order(ByteOrder.nativeOrder());
            long remoteAddress = handover.getLong();
            int rkey = handover.getInt();
            long[] posts = new long[iters];
            long[] trips = new long[iters];
            int complete = 0;
            for (int i = -warmup; i < iters; i++) {
                long start = System.nanoTime();
                qp.postRead(local, 0, size, remoteAddress, rkey, 1, true);
                long posted = System.nanoTime();
                int n = cq.poll(wcs);
                if (n > 0 && i >= 0) {
                    complete++;
                }
                while (n == 0) {
                    n = cq.poll(wcs);
                }
                if (wcs.status(0) != 0) {
                    throw new IllegalStateException("READ " + i + ": " + wcs.get(0).statusText());
                }
                if (i >= 0) {
                    posts[i] = posted - start;
                    trips[i] = System.nanoTime() - start;
                }
            }
            Arrays.sort(posts);
            Arrays.sort(trips);
            System.out.printf("Java read_post: post p50=%.1f us, round trip p50=%.1f us, complete after the post %d "
                + "of %d%n", posts[iters / 2] / 1e3, trips[iters / 2] / 1e3, complete, iters);
            id.disconnect();
            RcPingPong.expect(events, CmEventType.DISCONNECTED);
        }
    }
}
