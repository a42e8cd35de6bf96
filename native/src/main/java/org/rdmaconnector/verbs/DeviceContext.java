package org.rdmaconnector.verbs;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.rdmaconnector.connector.DeviceAttributes;
import org.rdmaconnector.connector.PortAttributes;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.jna.ContextOps;
import org.rdmaconnector.verbs.jna.IbVerbs;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;
import org.rdmaconnector.verbs.jna.RdmaCma;

/**
 * An open device ({@code struct ibv_context}): the parent of protection domains, completion channels and completion
 * queues, and the source of the device's asynchronous events. Closing it closes them, newest first.
 *
 * <p>{@link #open(String)} returns a view of the context librdmacm keeps for the device (rdma_get_devices(3)), so
 * what it creates works with the {@link CmId}s of that device. The view holds librdmacm's reference on that one
 * device until it is closed: librdmacm closes its context of a removed device only once no list, id or view refers
 * to it, so the context stays valid under everything the view created. Closing the view closes what it created and
 * then gives the reference back. {@link #openVerbsOnly(String)} opens a context of its own (ibv_open_device(3)),
 * closed with the object, for verbs use without the CM. Thread-safe.
 */
public final class DeviceContext extends NativeResource {
    private final long context;
    private final Device device;
    private final boolean owned;
    // librdmacm's list (malloc'd, NULL-terminated) holding this view's reference on the device; 0 when owned
    private final long reference;
    private final ContextOps ops;

    private DeviceContext(long context, boolean owned, long reference) {
        this.context = context;
        this.device = Device.of(Mem.getLong(context + Layout.IBV_CONTEXT_DEVICE));
        this.owned = owned;
        this.reference = reference;
        this.ops = ContextOps.of(context);
    }

    /**
     * Opens device {@code deviceName} through librdmacm (rdma_get_devices(3)), usable with CM ids on that device.
     * The view keeps librdmacm's reference on the device (and no other) until it is closed.
     *
     * @throws IllegalArgumentException if the name is null or empty
     * @throws RdmaException {@code ENODEV} when no RDMA device is present or none has that name
     */
    public static DeviceContext open(String deviceName) {
        if (deviceName == null || deviceName.isEmpty()) {
            throw new IllegalArgumentException("device name must not be null or empty");
        }
        Rdma.ensureAvailable();
        try (Memory count = Mem.allocate(4)) {
            long list = RdmaCma.rdma_get_devices(Mem.address(count));
            if (list == 0) {
                throw RdmaErrors.lastError("rdma_get_devices", "device " + deviceName);
            }
            int n = count.getInt(0);
            int found = -1;
            StringBuilder present = new StringBuilder();
            for (int i = 0; i < n && found < 0; i++) {
                String name = nameOf(Mem.getLong(list + 8L * i));
                if (deviceName.equals(name)) {
                    found = i;
                }
                present.append(present.length() == 0 ? "" : ", ").append(name);
            }
            if (found < 0) {
                DeviceList.giveBack(list);
                throw RdmaErrors.explained("rdma_get_devices", Layout.ENODEV,
                    "no device named '" + deviceName + "'; present: [" + present + "]");
            }
            return keepOnly(list, n, found);
        }
    }

    /**
     * Moves the reference {@code list} holds on entry {@code keep} into a list of its own (malloc'd, as
     * rdma_free_devices frees it) and gives the others back: a view must not hold the other devices.
     */
    private static DeviceContext keepOnly(long list, int n, int keep) {
        long context = Mem.getLong(list + 8L * keep);
        long reference = Native.malloc(16);
        if (reference == 0) {
            DeviceList.giveBack(list);
            throw new OutOfMemoryError("malloc of 16 bytes for the device list of " + nameOf(context) + " failed");
        }
        Mem.putLong(reference, context);
        Mem.putLong(reference + 8, 0);
        for (int i = keep; i < n; i++) { // the others, NULL-terminated, without the kept one
            Mem.putLong(list + 8L * i, Mem.getLong(list + 8L * (i + 1)));
        }
        DeviceList.giveBack(list);
        try {
            return new DeviceContext(context, false, reference);
        } catch (RuntimeException | Error e) {
            DeviceList.giveBack(reference);
            throw e;
        }
    }

    /**
     * Opens a verbs context of its own on device {@code deviceName} (ibv_open_device(3)); not usable with CM ids.
     *
     * @throws RdmaException {@code ENODEV} when there is no such device
     */
    public static DeviceContext openVerbsOnly(String deviceName) {
        if (deviceName == null || deviceName.isEmpty()) {
            throw new IllegalArgumentException("device name must not be null or empty");
        }
        Rdma.ensureAvailable();
        try (Memory count = Mem.allocate(4)) {
            long list = IbVerbs.ibv_get_device_list(Mem.address(count));
            if (list == 0) {
                throw RdmaErrors.lastError("ibv_get_device_list", "device " + deviceName);
            }
            try {
                for (int i = 0; i < count.getInt(0); i++) {
                    long device = Mem.getLong(list + 8L * i);
                    if (deviceName.equals(Mem.string(IbVerbs.ibv_get_device_name(device)))) {
                        long context = IbVerbs.ibv_open_device(device);
                        if (context == 0) {
                            throw RdmaErrors.lastError("ibv_open_device", "device " + deviceName);
                        }
                        return new DeviceContext(context, true, 0);
                    }
                }
                throw RdmaErrors.explained("ibv_get_device_list", Layout.ENODEV, "no device named '" + deviceName
                    + "'");
            } finally {
                IbVerbs.ibv_free_device_list(list);
            }
        }
    }

    static String nameOf(long context) {
        return Mem.string(IbVerbs.ibv_get_device_name(Mem.getLong(context + Layout.IBV_CONTEXT_DEVICE)));
    }

    /** The device name, e.g. {@code rxe0}. */
    public String deviceName() {
        return device.name();
    }

    /** The device this context is open on: name, GUID and the kernel's index of this registration of it. */
    public Device device() {
        return device;
    }

    /** Whether this context was opened with ibv_open_device(3) and is closed with it. */
    public boolean isVerbsOnly() {
        return owned;
    }

    /** ibv_query_device(3). */
    public DeviceAttributes query() {
        acquire();
        try (Memory attr = Mem.allocate(Layout.SIZEOF_IBV_DEVICE_ATTR)) {
            int rc = IbVerbs.ibv_query_device(context, Mem.address(attr));
            if (rc != 0) {
                throw RdmaErrors.fromReturnCode("ibv_query_device", rc, deviceName());
            }
            byte[] fw = attr.getByteArray(Layout.IBV_DEVICE_ATTR_FW_VER, 64);
            int len = 0;
            while (len < fw.length && fw[len] != 0) {
                len++;
            }
            return new DeviceAttributes(new String(fw, 0, len, StandardCharsets.US_ASCII),
                Long.reverseBytes(attr.getLong(Layout.IBV_DEVICE_ATTR_NODE_GUID)),
                attr.getLong(Layout.IBV_DEVICE_ATTR_MAX_MR_SIZE),
                attr.getInt(Layout.IBV_DEVICE_ATTR_VENDOR_ID), attr.getInt(Layout.IBV_DEVICE_ATTR_VENDOR_PART_ID),
                attr.getInt(Layout.IBV_DEVICE_ATTR_HW_VER), attr.getInt(Layout.IBV_DEVICE_ATTR_MAX_QP),
                attr.getInt(Layout.IBV_DEVICE_ATTR_MAX_QP_WR), attr.getInt(Layout.IBV_DEVICE_ATTR_MAX_SGE),
                attr.getInt(Layout.IBV_DEVICE_ATTR_MAX_CQ), attr.getInt(Layout.IBV_DEVICE_ATTR_MAX_CQE),
                attr.getInt(Layout.IBV_DEVICE_ATTR_MAX_MR), attr.getInt(Layout.IBV_DEVICE_ATTR_MAX_PD),
                Byte.toUnsignedInt(attr.getByte(Layout.IBV_DEVICE_ATTR_PHYS_PORT_CNT)));
        } finally {
            release();
        }
    }

    /**
     * ibv_query_port(3).
     *
     * @param portNumber from 1 to 255
     */
    public PortAttributes queryPort(int portNumber) {
        if (portNumber < 1 || portNumber > 255) {
            throw new IllegalArgumentException("portNumber must be from 1 to 255, was " + portNumber);
        }
        acquire();
        try (Memory attr = Mem.allocate(Layout.SIZEOF_IBV_PORT_ATTR)) {
            int rc = IbVerbs.ibv_query_port(context, (byte) portNumber, Mem.address(attr));
            if (rc != 0) {
                throw RdmaErrors.fromReturnCode("ibv_query_port", rc,
                    deviceName() + " port " + portNumber);
            }
            return new PortAttributes(portNumber, attr.getInt(Layout.IBV_PORT_ATTR_STATE),
                attr.getInt(Layout.IBV_PORT_ATTR_MAX_MTU), attr.getInt(Layout.IBV_PORT_ATTR_ACTIVE_MTU),
                attr.getInt(Layout.IBV_PORT_ATTR_GID_TBL_LEN),
                Integer.toUnsignedLong(attr.getInt(Layout.IBV_PORT_ATTR_MAX_MSG_SZ)),
                Short.toUnsignedInt(attr.getShort(Layout.IBV_PORT_ATTR_LID)),
                Byte.toUnsignedInt(attr.getByte(Layout.IBV_PORT_ATTR_LINK_LAYER)));
        } finally {
            release();
        }
    }

    /** How many completion vectors the device has ({@code num_comp_vectors}). */
    public int completionVectorCount() {
        acquire();
        try {
            return Mem.getInt(context + Layout.IBV_CONTEXT_NUM_COMP_VECTORS);
        } finally {
            release();
        }
    }

    /** ibv_alloc_pd(3). */
    public ProtectionDomain allocateProtectionDomain() {
        acquire();
        try {
            long pd = IbVerbs.ibv_alloc_pd(context);
            if (pd == 0) {
                throw RdmaErrors.lastError("ibv_alloc_pd", deviceName());
            }
            return new ProtectionDomain(this, pd);
        } finally {
            release();
        }
    }

    /** ibv_create_comp_channel(3). */
    public CompletionChannel createCompletionChannel() {
        acquire();
        try {
            long channel = IbVerbs.ibv_create_comp_channel(context);
            if (channel == 0) {
                throw RdmaErrors.lastError("ibv_create_comp_channel", deviceName());
            }
            return new CompletionChannel(this, channel);
        } finally {
            release();
        }
    }

    /**
     * ibv_create_cq(3).
     *
     * @param minEntries at least this many entries, from 1 to the device's {@code maxCqe}
     * @param channel the completion channel for its events, or null for a polled-only queue
     * @param completionVector from 0 to {@link #completionVectorCount()} - 1
     */
    public CompletionQueue createCompletionQueue(int minEntries, CompletionChannel channel, int completionVector) {
        if (minEntries < 1) {
            throw new IllegalArgumentException("minEntries must be at least 1, was " + minEntries);
        }
        if (completionVector < 0) {
            throw new IllegalArgumentException("completionVector must be at least 0, was " + completionVector);
        }
        if (channel != null && channel.context() != this) {
            throw new IllegalArgumentException("the completion channel belongs to another device context");
        }
        acquire();
        try {
            if (channel != null) {
                channel.acquire();
            }
            try {
                int vectors = Mem.getInt(context + Layout.IBV_CONTEXT_NUM_COMP_VECTORS);
                if (completionVector >= vectors) {
                    throw new IllegalArgumentException("completionVector must be from 0 to " + (vectors - 1)
                        + " on " + deviceName() + ", was " + completionVector);
                }
                long cq = IbVerbs.ibv_create_cq(context, minEntries, 0, channel == null ? 0 : channel.address(),
                    completionVector);
                if (cq == 0) {
                    throw RdmaErrors.lastError("ibv_create_cq", deviceName() + ", " + minEntries + " entries");
                }
                return new CompletionQueue(this, channel, cq);
            } finally {
                if (channel != null) {
                    channel.release();
                }
            }
        } finally {
            release();
        }
    }

    /** The async event file descriptor ({@code async_fd}), for poll/epoll. */
    public int asyncFd() {
        acquire();
        try {
            return Mem.getInt(context + Layout.IBV_CONTEXT_ASYNC_FD);
        } finally {
            release();
        }
    }

    /** Makes {@link #getAsyncEvent()} return null instead of blocking when no event is pending. */
    public void setAsyncNonBlocking(boolean nonBlocking) {
        acquire();
        try {
            Fds.setNonBlocking(Mem.getInt(context + Layout.IBV_CONTEXT_ASYNC_FD), nonBlocking,
                deviceName() + " async fd");
        } finally {
            release();
        }
    }

    /** Waits until an async event is pending or the timeout passes; true when one is. */
    public boolean awaitAsyncEvent(Duration timeout) {
        int fd = asyncFd();
        return Fds.awaitReadable(fd, timeout, deviceName() + " async fd");
    }

    /**
     * ibv_get_async_event(3), copied and acknowledged (ibv_ack_async_event) before it returns. Blocks unless
     * {@link #setAsyncNonBlocking(boolean)}; then returns null when none is pending.
     */
    public AsyncEvent getAsyncEvent() {
        acquire();
        try (Memory event = Mem.allocate(Layout.SIZEOF_IBV_ASYNC_EVENT)) {
            if (IbVerbs.ibv_get_async_event(context, Mem.address(event)) != 0) {
                int errno = Mem.errno();
                if (errno == Layout.EAGAIN) {
                    return null;
                }
                throw RdmaErrors.of("ibv_get_async_event", errno, deviceName());
            }
            int type = event.getInt(Layout.IBV_ASYNC_EVENT_EVENT_TYPE);
            AsyncEventType kind = AsyncEventType.of(type);
            int port = kind.isPortEvent() ? event.getInt(Layout.IBV_ASYNC_EVENT_ELEMENT) : 0;
            IbVerbs.ibv_ack_async_event(Mem.address(event));
            return new AsyncEvent(deviceName(), kind, type, port, Mem.string(IbVerbs.ibv_event_type_str(type)));
        } finally {
            release();
        }
    }

    long address() {
        return context;
    }

    ContextOps ops() {
        return ops;
    }

    @Override
    protected void destroy() {
        if (owned) {
            int rc = IbVerbs.ibv_close_device(context);
            if (rc != 0) {
                throw RdmaErrors.fromReturnCode("ibv_close_device", rc, deviceName());
            }
            return;
        }
        // librdmacm learns that a device is gone only when it lists the devices again; until then it keeps its
        // context of a removed one open, and the kernel cannot finish the removal. Listing now, while this view
        // still holds the device, marks a removed one dead, so giving the reference back closes that context as soon
        // as nothing refers to it any more. Both lists go back under anchor ids (DeviceList: librdmacm's protection
        // domain is freed only when an id's reference is the last one).
        DeviceList.giveBack(RdmaCma.rdma_get_devices(0), reference);
    }

    @Override
    public String toString() {
        return "DeviceContext[" + device + (owned ? ", verbs only" : "") + (isClosed() ? ", closed]" : "]");
    }
}
