package org.rdmaconnector.connector.spi;

import com.sun.jna.Memory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.rdmaconnector.connector.RemoteAccess;
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.verbs.Access;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.MemoryRegion;
import org.rdmaconnector.verbs.PolledCompletion;
import org.rdmaconnector.verbs.ProtectionDomain;
import org.rdmaconnector.verbs.QueuePair;
import org.rdmaconnector.verbs.QueuePairCapabilities;
import org.rdmaconnector.verbs.RnrTimer;
import org.rdmaconnector.verbs.engine.Registration;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;

/**
 * The data path of one reliable connection, shared by outbound endpoints and accepted connections: its CM id and
 * queue pair, one registered staging buffer ({@code sendSlots} + {@code recvSlots} slots of {@code slotSize} bytes),
 * and the posted requests by work request id, each completed exactly once: by its work completion, or as flushed
 * when the connection is closed first. The staging memory is native memory of its own, freed by {@link #close()} (not
 * by the garbage collector: a peer that connects and disconnects in a loop must not be able to pile up direct memory
 * until a GC); the messages of the receive slots lent to deliveries then are copied out first. {@link #disconnect()} is
 * the one place a connection's rdma_disconnect is sent. After {@link #deviceRemoved} every posted request has ended
 * with the removal's error and every later post throws it. Regions registered through {@link #register} (an accepted
 * connection's) are deregistered by {@link #close()}.
 * Thread-safe.
 */
final class RcConnection {
    private static final System.Logger LOG = System.getLogger(RcConnection.class.getName());
    private final CmId id;
    private final ProtectionDomain pd;
    // the engine's registration of the CQ: an awaiting thread polls it (pollUntil)
    private final Registration completions;
    private final QueuePair qp;
    private final int qpNumber;
    private final Memory stagingMemory;
    private final MemoryRegion staging;
    private final int slotSize;
    private final int sendSlots;
    // guarded by this
    private final FreeSlots freeSend;
    private final FreeSlots freeRecv;
    // made once per slot, not per post: a staged receive's poster, and a staged send's, which posts the bytes its
    // slot's sendLengths entry says (set by the posting thread before the post)
    private final Poster[] slotPosters;
    private final int[] sendLengths;
    private final LongTable<PostedRequest> posted;
    // by request kind: the successful completion of the unsignaled requests a signaled one covers, made once and
    // shared (wr_id 0, no request's: each request makes its own from it only when asked, PostedRequest.result())
    private final PolledCompletion[] covered;
    private final Set<MemoryRegion> regions = ConcurrentHashMap.newKeySet();
    private final SelectiveSignaling signaling;
    // the lock of every send-queue post: work request ids grow in the send queue's order. Not the signaling's own:
    // the thread that polls the CQ (the event loop) takes only that, briefly, and never waits for another thread's
    // ibv_post_send (a system call on rxe, which runs the requester in the caller's context)
    private final Object sendQueueOrder = new Object();
    // one sequence for all connections: a stale completion of a reused qp number never matches a new request
    private static final AtomicLong NEXT_WR_ID = new AtomicLong();
    // guarded by this; the staging memory is read and written only under this lock, and while not closed (or, for
    // a lent receive slot, until close frees it: stagingFreed)
    private boolean closed;
    private boolean stagingFreed;
    // guarded by this, by receive slot (slot - sendSlots): the receive whose message a delivery still reads in its
    // slot (see complete(wc, true)), the message's length, and its bytes once close freed the staging memory
    private final PostedRequest[] lentTo;
    private final int[] lentLength;
    private final byte[][] copiedAtClose;
    private boolean disconnectSent;
    // set once, before the posted requests are failed: a post that sees it unset is failed by deviceRemoved
    private volatile DeviceRemoval removal;

    /**
     * Free staging slots, as a stack of slot numbers (no boxing per take or give-back). A slot given back while free
     * is ignored: one slot is never handed to two requests.
     */
    private static final class FreeSlots {
        private final int from;
        private final int[] slots;
        private final boolean[] free;
        private int count;

        FreeSlots(int from, int count) {
            this.from = from;
            this.slots = new int[count];
            this.free = new boolean[count];
            for (int i = 0; i < count; i++) {
                slots[i] = from + count - 1 - i; // the lowest slot taken first
                free[i] = true;
            }
            this.count = count;
        }

        int size() {
            return count;
        }

        int capacity() {
            return slots.length;
        }

        /** A free slot, or -1 when every one is taken. */
        int take() {
            if (count == 0) {
                return -1;
            }
            int slot = slots[--count];
            free[slot - from] = false;
            return slot;
        }

        void giveBack(int slot) {
            if (!free[slot - from]) {
                free[slot - from] = true;
                slots[count++] = slot;
            }
        }
    }

    /** Posts one work request with the id it is given, signaled or not (receives are always signaled). */
    @FunctionalInterface
    private interface Poster {
        void post(long wrId, boolean signaled);
    }

    /**
     * Creates the queue pair on {@code id} with the CQ of {@code queues} and registers the staging buffer with its
     * protection domain. A thread that awaits one of its requests first reads the CQ itself for the engine's
     * busy-poll budget ({@link Registration#pollUntil}).
     */
    RcConnection(CmId id, DeviceQueueSet queues, QueuePairCapabilities capabilities, int slotSize, int sendSlots,
                 int recvSlots) {
        this.id = id;
        this.pd = queues.protectionDomain();
        this.completions = queues.completions();
        CompletionQueue cq = queues.completionQueue();
        this.slotSize = slotSize;
        this.sendSlots = sendSlots;
        // the Java objects first: nothing native is left behind if one cannot be made
        this.freeSend = new FreeSlots(0, sendSlots);
        this.freeRecv = new FreeSlots(sendSlots, recvSlots);
        this.sendLengths = new int[sendSlots];
        this.lentTo = new PostedRequest[recvSlots];
        this.lentLength = new int[recvSlots];
        this.copiedAtClose = new byte[recvSlots][];
        this.slotPosters = new Poster[sendSlots + recvSlots];
        this.covered = new PolledCompletion[WorkRequest.Kind.values().length];
        this.qp = id.createQueuePair(pd, cq, cq, capabilities);
        this.qpNumber = qp.qpNumber();
        this.signaling = new SelectiveSignaling(capabilities.maxSendWr()); // as asked: the device may grant more
        this.posted = new LongTable<>(capabilities.maxSendWr() + capabilities.maxRecvWr());
        long bytes = Math.max(1, stagingBytes(slotSize, sendSlots, recvSlots));
        Memory memory = null;
        try {
            for (WorkRequest.Kind kind : WorkRequest.Kind.values()) {
                covered[kind.ordinal()] = PolledCompletion.of(new WorkCompletion(0, Layout.IBV_WC_SUCCESS,
                    opcodeOf(kind), 0, 0, 0, qpNumber, 0, 0));
            }
            memory = Mem.allocate(bytes);
            this.staging = pd.register(memory.getByteBuffer(0, Math.toIntExact(bytes)));
        } catch (RuntimeException | Error e) {
            if (memory != null) {
                memory.close();
            }
            qp.close();
            throw e;
        }
        this.stagingMemory = memory;
        int inlineMax = qp.capabilities().maxInlineData();
        for (int i = 0; i < sendSlots; i++) {
            int slot = i;
            int at = slot * slotSize;
            // a message that fits the inline data the queue pair was granted (MaxInlineData) is sent inline
            slotPosters[slot] = (wrId, signal) -> {
                int length = sendLengths[slot];
                if (length > 0 && length <= inlineMax) {
                    qp.postSendInline(staging, at, length, wrId, signal);
                } else {
                    qp.postSend(staging, at, length, wrId, signal);
                }
            };
        }
        for (int i = 0; i < recvSlots; i++) {
            int at = (sendSlots + i) * slotSize;
            slotPosters[sendSlots + i] = (wrId, signaled) -> qp.postReceive(staging, at, slotSize, wrId);
        }
    }

    /** Bytes of the staging buffer (counted against registration limits). */
    static long stagingBytes(int slotSize, int sendSlots, int recvSlots) {
        return (long) (sendSlots + recvSlots) * slotSize;
    }

    CmId id() {
        return id;
    }

    int qpNumber() {
        return qpNumber;
    }

    /**
     * Once the connection is established: what its receiver-not-ready NAKs make the peer wait before it sends
     * again, the shortest {@link RnrTimer} of at least {@code micros} (MinRnrTimerMicros) instead of the RDMA CM's
     * 655.36 ms; 0 leaves the CM's. A queue pair that refuses (already in error, or a device without the change)
     * keeps the CM's timer, and the connection goes on: the refusal is logged.
     */
    void setMinRnrTimer(int micros) {
        if (micros == 0) {
            return;
        }
        RnrTimer timer = RnrTimer.atLeastMicros(micros);
        try {
            qp.setMinRnrTimer(timer);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "the connection " + id + " (qp " + qpNumber + ") keeps the RDMA "
                + "CM's RNR timer of " + RnrTimer.CM_DEFAULT + " instead of " + timer + ": " + e);
        }
    }

    int slotSize() {
        return slotSize;
    }

    /**
     * Copies the {@code length} bytes at {@code offset} of {@code message} into a free send slot and posts them;
     * unsignaled when asked, unless it leaves fewer than three quarters of the slots free: the slots of unsignaled
     * sends come back only when a later signaled request completes, and the sends in flight meanwhile need the others
     * (signaled only at the last free slot, an echo of 16 outstanding messages over 32 slots found every slot taken).
     */
    WorkRequest sendStaged(byte[] message, int offset, int length, boolean signaled) {
        if (message == null) {
            throw new IllegalArgumentException("message must not be null");
        }
        if (offset < 0 || length < 0 || offset > message.length - length) {
            throw new IndexOutOfBoundsException(length + " bytes at offset " + offset + " are not inside the message of "
                + message.length + " bytes");
        }
        if (length > slotSize) {
            throw new IllegalArgumentException("message of " + length + " bytes is larger than a send slot ("
                + slotSize + " bytes); register a buffer and send from it");
        }
        int slot = take(freeSend, WorkRequest.Kind.SEND);
        boolean scarce;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the connection is closed");
            }
            stagingMemory.write((long) slot * slotSize, message, offset, length);
            scarce = 4L * freeSend.size() < 3L * sendSlots;
        }
        sendLengths[slot] = length; // the slot is this thread's until it is given back
        return post(WorkRequest.Kind.SEND, slot, signaled || scarce, slotPosters[slot]);
    }

    /**
     * Posts a send from a region of the application's; an unsignaled one completes with the next signaled request
     * ({@link SelectiveSignaling}).
     */
    WorkRequest send(MemoryRegion region, int offset, int length, boolean signaled) {
        return post(WorkRequest.Kind.SEND, -1, signaled,
            (wrId, signal) -> qp.postSend(region, offset, length, wrId, signal));
    }

    /** Posts a receive into a free receive slot. */
    WorkRequest receiveStaged() {
        int slot = take(freeRecv, WorkRequest.Kind.RECEIVE);
        return post(WorkRequest.Kind.RECEIVE, slot, true, slotPosters[slot]);
    }

    /** Posts a receive into a region of the application's. */
    WorkRequest receive(MemoryRegion region, int offset, int length) {
        return post(WorkRequest.Kind.RECEIVE, -1, true, (wrId, signaled) -> qp.postReceive(region, offset, length,
            wrId));
    }

    /** Posts {@code operation} (checked already) with {@code local}, the verbs region of its local one. */
    WorkRequest post(RdmaOperation operation, MemoryRegion local) {
        int offset = operation.offset();
        int length = operation.length();
        long remoteAddress = operation.remoteAddress();
        int rkey = operation.remote().rkey();
        return post(operation.kind(), -1, operation.signaled(), switch (operation.opcode()) {
            case WRITE -> (wrId, signaled) -> qp.postWrite(local, offset, length, remoteAddress, rkey, wrId, signaled);
            case WRITE_WITH_IMMEDIATE -> (wrId, signaled) -> qp.postWriteWithImmediate(local, offset, length,
                remoteAddress, rkey, operation.immediateData(), wrId, signaled);
            case READ -> (wrId, signaled) -> qp.postRead(local, offset, length, remoteAddress, rkey, wrId, signaled);
        });
    }

    /**
     * Registers {@code buffer} with the queue pair's protection domain (LOCAL_WRITE, and {@code remoteAccess}); the
     * region is deregistered by {@link #close()}.
     *
     * @throws IllegalStateException when the connection is closed
     */
    MemoryRegion register(ByteBuffer buffer, Set<RemoteAccess> remoteAccess) {
        Set<Access> access = Access.withRemote(remoteAccess);
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the connection is closed");
            }
        }
        MemoryRegion region = pd.register(buffer, access);
        regions.add(region);
        boolean closedMeanwhile;
        synchronized (this) {
            closedMeanwhile = closed;
        }
        if (closedMeanwhile) { // close() may have looked at the set before this region was in it
            if (regions.remove(region)) {
                region.close();
            }
            throw new IllegalStateException("the connection is closed");
        }
        return region;
    }

    /** {@code region} as {@link #register} made it; one registered elsewhere is refused. */
    MemoryRegion registered(org.rdmaconnector.connector.MemoryRegion region) {
        if (region instanceof MemoryRegion verbsRegion && regions.contains(verbsRegion)) {
            return verbsRegion;
        }
        throw new IllegalArgumentException("memory region " + region + " is not registered through this connection"
            + " (register it with the connection's register(ByteBuffer, Set), and keep it until the requests "
            + "complete)");
    }

    private synchronized int take(FreeSlots free, WorkRequest.Kind kind) {
        refuseIfRemoved(kind); // before the slots: a removal leaves its requests' slots taken
        if (closed) {
            throw new IllegalStateException("the connection is closed");
        }
        int slot = free.take();
        if (slot < 0) {
            String name = kind == WorkRequest.Kind.SEND ? "send" : "receive";
            throw new IllegalStateException("all " + free.capacity() + " " + name + " slots are in flight; wait for earlier "
                + name + "s to complete");
        }
        return slot;
    }

    private synchronized void giveBack(int slot) {
        if (slot >= 0 && !closed) {
            (slot < sendSlots ? freeSend : freeRecv).giveBack(slot);
        }
    }

    /**
     * Posts one request of {@code kind} by {@code poster}, which is given its work request id and whether it is
     * signaled: as asked, unless {@link SelectiveSignaling} must signal it.
     */
    private WorkRequest post(WorkRequest.Kind kind, int slot, boolean signaled, Poster poster) {
        if (kind == WorkRequest.Kind.RECEIVE) {
            return post(kind, slot, true, poster, NEXT_WR_ID.incrementAndGet(), null);
        }
        synchronized (sendQueueOrder) {
            return post(kind, slot, signaling.signals(signaled), poster, NEXT_WR_ID.incrementAndGet(), null);
        }
    }

    /** Posts request {@code wrId}: {@code done}, a request of the same kind and slot, again if it can be, else anew. */
    private WorkRequest post(WorkRequest.Kind kind, int slot, boolean signaled, Poster poster, long wrId,
                             PostedRequest done) {
        PostedRequest request = done != null && done.reposted(wrId) ? done
            : new PostedRequest(wrId, kind, completions, slot, signaled);
        boolean sendQueue = kind != WorkRequest.Kind.RECEIVE;
        posted.put(wrId, request);
        // recorded before the post: its completion, or one covering it, may come at once
        int runBefore = sendQueue ? signaling.posted(wrId, signaled) : 0;
        try {
            refuseIfRemoved(kind); // after the put: deviceRemoved either fails this request or is seen here
            poster.post(wrId, signaled);
        } catch (RuntimeException e) {
            if (sendQueue) {
                signaling.unposted(wrId, runBefore); // never posted
            }
            posted.remove(wrId);
            giveBack(slot);
            throw e;
        }
        return request;
    }

    /**
     * Completes the request of {@code wc}, copying the bytes of a staged receive first and freeing its slot. A
     * send-queue request first completes the unsignaled requests posted before it, as successful.
     *
     * @return the request, or null when it was already completed (flushed by a close)
     */
    PostedRequest complete(PolledCompletion wc) {
        return complete(wc, false);
    }

    /**
     * As {@link #complete(PolledCompletion)}; with {@code lendMessage}, a staged receive that holds a message is
     * completed without its bytes, which stay in its slot, lent: {@link #readLent} reads them there until
     * {@link #receiveAgain} posts the slot again or {@link #giveBackLent} frees it (a listener's delivery reads the
     * message in place, and posts the receive again once it is through). Closing meanwhile copies the message out
     * before it frees the staging memory, and {@link #readLent} reads that copy.
     */
    PostedRequest complete(PolledCompletion wc, boolean lendMessage) {
        PostedRequest p = endAlone(wc.wrId()); // its own completion: for an unsignaled one, a failure or a flush
        if (p == null) {
            return null; // flushed by a close meanwhile
        }
        if (p.kind() != WorkRequest.Kind.RECEIVE) {
            for (long covered = signaling.nextCoveredBy(wc.wrId()); covered >= 0;
                 covered = signaling.nextCoveredBy(wc.wrId())) {
                completeCovered(covered);
            }
        }
        byte[] data = null;
        if (p.kind() == WorkRequest.Kind.RECEIVE && p.slot() >= 0) {
            // the peer's RDMA WRITE with immediate takes a receive and puts nothing in its slot: byte_len is the
            // length of the write, whose bytes are in the written region
            boolean message = wc.isSuccess() && wc.opcode() != WcOpcode.RECV_RDMA_WITH_IMM;
            boolean lend = message && lendMessage;
            data = lend ? null : new byte[message ? Math.min(wc.byteLength(), slotSize) : 0];
            synchronized (this) {
                if (closed) {
                    // closed meanwhile, after this request left the table (its flush did not see it): it ends as
                    // flushed here, and is not delivered
                    p.complete(flushed(p), new byte[0]);
                    return null;
                }
                if (lend) {
                    lentTo[p.slot() - sendSlots] = p;
                    lentLength[p.slot() - sendSlots] = Math.min(wc.byteLength(), slotSize);
                } else {
                    stagingMemory.read((long) p.slot() * slotSize, data, 0, data.length);
                }
            }
            if (lend) {
                p.complete(wc, null);
                return p;
            }
        }
        giveBack(p.slot());
        p.complete(wc, data);
        return p;
    }

    /**
     * Copies {@code length} bytes of the message that {@code receive} left in its slot ({@link #complete(
     * PolledCompletion, boolean)}) to {@code destination} at {@code offset}.
     *
     * @throws IllegalStateException when its slot is not lent to it (any more)
     */
    synchronized void readLent(WorkRequest receive, byte[] destination, int offset, int length) {
        int slot = lentSlot(receive);
        if (slot < 0) {
            throw new IllegalStateException(receive + " holds no bytes in a receive slot: it was posted again");
        }
        int i = slot - sendSlots;
        if (length < 0 || length > lentLength[i]) {
            throw new IndexOutOfBoundsException(length + " bytes asked of a message of " + lentLength[i]);
        }
        if (stagingFreed) {
            System.arraycopy(copiedAtClose[i], 0, destination, offset, length);
        } else {
            stagingMemory.read((long) slot * slotSize, destination, offset, length);
        }
    }

    /**
     * Posts a staged receive again: into the slot lent to {@code receive}, as the same request object started
     * afresh ({@link PostedRequest#reposted}), or into a free one when none is (its completion held no message).
     * For a listener's receives only, which are never handed out.
     */
    WorkRequest receiveAgain(WorkRequest receive) {
        int slot;
        synchronized (this) {
            slot = lentSlot(receive);
            if (slot >= 0) {
                unlend(slot);
                if (closed) {
                    throw new IllegalStateException("the connection is closed");
                }
            }
        }
        if (slot < 0) {
            return receiveStaged();
        }
        // the same request, as a new one: a listener's receive (never handed out) reposted allocates nothing
        return post(WorkRequest.Kind.RECEIVE, slot, true, slotPosters[slot], NEXT_WR_ID.incrementAndGet(),
            (PostedRequest) receive);
    }

    /** Frees the slot lent to {@code receive}, without posting it (the connection is ending); else nothing. */
    synchronized void giveBackLent(WorkRequest receive) {
        int slot = lentSlot(receive);
        if (slot >= 0) {
            unlend(slot);
            giveBack(slot);
        }
    }

    private int lentSlot(WorkRequest receive) {
        if (receive instanceof PostedRequest p && p.slot() >= sendSlots && lentTo[p.slot() - sendSlots] == p) {
            return p.slot();
        }
        return -1;
    }

    private void unlend(int slot) {
        lentTo[slot - sendSlots] = null;
        copiedAtClose[slot - sendSlots] = null;
    }

    /**
     * Removes request {@code wrId}, which ends by itself (its own completion, or the connector's flush), and returns
     * it, or null when it was gone already. An unsignaled one leaves {@link SelectiveSignaling} first, so that
     * {@link #outstanding()} never counts below 0.
     */
    private PostedRequest endAlone(long wrId) {
        PostedRequest p = posted.get(wrId);
        if (p != null && !p.signaled()) {
            signaling.completedAlone(wrId);
        }
        return posted.remove(wrId);
    }

    /** Completes unsignaled request {@code wrId} as successful: a later signaled one completed (RC's order). */
    private void completeCovered(long wrId) {
        PostedRequest p = posted.remove(wrId);
        if (p == null) {
            return; // it failed, with a completion of its own, or was flushed
        }
        giveBack(p.slot());
        p.completeCovered(covered[p.kind().ordinal()]);
    }

    /** The work completion {@code p} ends with when the connector flushes it (IBV_WC_WR_FLUSH_ERR). */
    private PolledCompletion flushed(PostedRequest p) {
        return PolledCompletion.of(new WorkCompletion(p.wrId(), Layout.IBV_WC_WR_FLUSH_ERR, opcodeOf(p.kind()), 0, 0,
            0, qpNumber, 0, 0));
    }

    private static String postFunction(WorkRequest.Kind kind) {
        return kind == WorkRequest.Kind.RECEIVE ? "ibv_post_recv" : "ibv_post_send";
    }

    /**
     * The opcode a request of {@code kind} is reported with when the connector completes it: flushed (a failed
     * completion's own opcode is undefined), or covered by a later signaled request.
     */
    private static WcOpcode opcodeOf(WorkRequest.Kind kind) {
        return switch (kind) {
            case SEND -> WcOpcode.SEND;
            case RECEIVE -> WcOpcode.RECV;
            case RDMA_WRITE -> WcOpcode.RDMA_WRITE;
            case RDMA_READ -> WcOpcode.RDMA_READ;
        };
    }

    private void refuseIfRemoved(WorkRequest.Kind kind) {
        DeviceRemoval r = removal;
        if (r != null) {
            throw r.error(postFunction(kind));
        }
    }

    /**
     * The device is gone ({@code removal}): nothing posted will ever complete (rxe completes nothing after a
     * removal), so every posted request ends now with the removal's error, and every later post throws it. Once;
     * the id, queue pair and staging memory stay until {@link #close()}.
     */
    void deviceRemoved(DeviceRemoval removal) {
        synchronized (this) {
            if (this.removal != null) {
                return;
            }
            this.removal = removal;
        }
        endPosted(removal);
    }

    /**
     * Requests posted whose work completion is still to come: not those unsignaled requests that wait for a later
     * signaled one, which may be done already (a done unsignaled request makes no completion, not even a flush).
     */
    int outstanding() {
        return posted.size() - signaling.uncovered();
    }

    /** Completes every posted request as flushed (IBV_WC_WR_FLUSH_ERR) and returns them. */
    List<WorkRequest> flush() {
        return endPosted(null);
    }

    /** Ends every posted request as flushed, with {@code removal}'s error when it is not null; returns them. */
    private List<WorkRequest> endPosted(DeviceRemoval removal) {
        List<WorkRequest> ended = new ArrayList<>();
        for (long wrId : posted.ids()) {
            PostedRequest p = endAlone(wrId);
            if (p != null) {
                PolledCompletion flushed = flushed(p);
                if (removal != null) {
                    p.fail(flushed, removal.error(postFunction(p.kind())));
                } else {
                    p.complete(flushed, p.slot() >= 0 && p.kind() == WorkRequest.Kind.RECEIVE ? new byte[0] : null);
                }
                ended.add(p);
            }
        }
        return ended;
    }

    /**
     * Sends rdma_disconnect at most once: our own disconnect (DREQ) or the answer to the peer's (DREP), whichever
     * comes first; the queue pair then goes to ERROR and flushes what is posted.
     *
     * @return whether this call sent it
     */
    boolean disconnect() {
        synchronized (this) {
            if (disconnectSent || closed) {
                return false;
            }
            disconnectSent = true;
        }
        id.disconnect();
        return true;
    }

    /**
     * Destroys the id (and with it the queue pair), completes what is left as flushed, deregisters the regions
     * registered through it and the staging buffer and frees its memory, now. Twice is a no-op.
     */
    void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            id.close();
        } finally {
            flush();
            try {
                AutoCloseableStack owned = new AutoCloseableStack();
                for (MemoryRegion region : List.copyOf(regions)) {
                    owned.push(() -> {
                        if (regions.remove(region)) {
                            region.close();
                        }
                    });
                }
                owned.push(staging);
                owned.closeAll(null); // each is deregistered even when another fails
            } finally {
                synchronized (this) { // no copy in or out is running: they hold this lock and check 'closed'
                    for (int i = 0; i < lentTo.length; i++) {
                        if (lentTo[i] != null) { // a delivery still reads it: the queue pair is gone, it stays put
                            copiedAtClose[i] = new byte[lentLength[i]];
                            stagingMemory.read((long) (sendSlots + i) * slotSize, copiedAtClose[i], 0, lentLength[i]);
                        }
                    }
                    stagingFreed = true;
                    stagingMemory.close();
                }
            }
        }
    }
}
