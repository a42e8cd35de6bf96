package org.rdmaconnector.verbs;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;
import org.rdmaconnector.verbs.jna.RdmaCma;
import org.rdmaconnector.verbs.jna.Scratch;

/**
 * An RDMA CM event channel ({@code struct rdma_event_channel}, rdma_create_event_channel(3)): the file descriptor
 * on which the CM reports the events of its {@link CmId}s. Can be made non-blocking and polled. Every event is copied
 * and acknowledged inside {@link #getEvent()}, so nothing is ever left unacknowledged and destroying ids never blocks.
 * Closing it closes its ids first. Thread-safe; in blocking mode a {@link #close()} from another thread waits for a
 * blocked {@link #getEvent()} to return, so a channel that another thread may close is best read non-blocking (with
 * {@link #awaitEvent(java.time.Duration)}) or through the event engine.
 */
public final class EventChannel extends FdChannel {
    private final long channel;
    private final Map<Long, CmId> ids = new ConcurrentHashMap<>();

    private EventChannel(long channel) {
        super(Mem.getInt(channel + Layout.RDMA_EVENT_CHANNEL_FD), "event channel");
        this.channel = channel;
    }

    /**
     * rdma_create_event_channel(3).
     *
     * @throws RdmaException ENODEV when no RDMA device is present on this machine
     */
    public static EventChannel create() {
        Rdma.ensureAvailable();
        long channel = RdmaCma.rdma_create_event_channel();
        if (channel == 0) {
            throw RdmaErrors.lastError("rdma_create_event_channel", null);
        }
        return new EventChannel(channel);
    }

    /**
     * rdma_get_cm_event(3), copied and acknowledged. Blocks unless non-blocking; then returns null when no event is
     * pending.
     */
    public CmEvent getEvent() {
        acquire();
        try {
            long out = Scratch.address();
            while (true) {
                if (RdmaCma.rdma_get_cm_event(channel, out) != 0) {
                    int errno = Mem.errno();
                    if (errno == Layout.EAGAIN) {
                        return null;
                    }
                    throw RdmaErrors.of("rdma_get_cm_event", errno, description());
                }
                long event = Mem.getLong(out);
                CmEvent copy;
                try {
                    copy = copy(event);
                } finally {
                    RdmaCma.rdma_ack_cm_event(event);
                }
                if (copy != null) {
                    return copy;
                }
            }
        } finally {
            release();
        }
    }

    private CmEvent copy(long event) {
        int rawType = Mem.getInt(event + Layout.RDMA_CM_EVENT_EVENT);
        CmEventType type = CmEventType.of(rawType);
        int status = Mem.getInt(event + Layout.RDMA_CM_EVENT_STATUS);
        long idAddress = Mem.getLong(event + Layout.RDMA_CM_EVENT_ID);
        long listenAddress = Mem.getLong(event + Layout.RDMA_CM_EVENT_LISTEN_ID);
        CmId listenId = listenAddress == 0 ? null : ids.get(listenAddress);
        CmId id = ids.get(idAddress);
        if (type == CmEventType.CONNECT_REQUEST && (id == null || id.isClosed()) && listenId != null) {
            id = new CmId(this, idAddress, listenId.portSpace());
        }
        if (type == null || id == null) {
            // an id closed from Java while the kernel reported for it, or a type newer than this code: nothing
            // can act on it; it is acknowledged by the caller
            return null;
        }
        ConnectionParameters parameters = null;
        if (id.portSpace() == PortSpace.TCP && (type == CmEventType.CONNECT_REQUEST
            || type == CmEventType.CONNECT_RESPONSE || type == CmEventType.ESTABLISHED
            || type == CmEventType.REJECTED)) {
            parameters = CmId.readConnParam(event + Layout.RDMA_CM_EVENT_PARAM);
        }
        return new CmEvent(type, status, id, listenId, parameters);
    }

    /** rdma_create_id(3): a new id on this channel. */
    public CmId createId(PortSpace portSpace) {
        if (portSpace == null) {
            throw new IllegalArgumentException("portSpace must not be null");
        }
        acquire();
        try {
            long out = Scratch.address();
            if (RdmaCma.rdma_create_id(channel, out, 0, portSpace.value()) != 0) {
                throw RdmaErrors.lastError("rdma_create_id", portSpace.name());
            }
            return new CmId(this, Mem.getLong(out), portSpace);
        } finally {
            release();
        }
    }

    /** How many ids are open on this channel. */
    public int idCount() {
        return ids.size();
    }

    void register(long id, CmId cmId) {
        ids.put(id, cmId);
    }

    /** Forgets {@code cmId} under its address, unless another id holds that address already. */
    void unregister(long id, CmId cmId) {
        ids.remove(id, cmId);
    }

    long address() {
        return channel;
    }

    @Override
    protected void destroy() {
        RdmaCma.rdma_destroy_event_channel(channel);
    }

    @Override
    public String toString() {
        return "EventChannel[" + description() + (isClosed() ? ", closed]" : "]");
    }
}
