package org.rdmaconnector.verbs;

import com.sun.jna.Memory;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.rdmaconnector.verbs.jna.IbVerbs;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;
import org.rdmaconnector.verbs.jna.RdmaCma;

/**
 * Giving back the references a librdmacm device list (rdma_get_devices(3)) holds, without leaving librdmacm's
 * protection domain behind.
 *
 * <p>librdmacm 44 ({@code librdmacm/cma.c}) counts references per device: one per list entry and one per id bound to
 * the device. It allocates one protection domain per device when an id is bound ({@code ucma_get_device}) and frees
 * it only when an id's reference is the last one given back ({@code ucma_put_device}). {@code rdma_free_devices}
 * lowers the same count, to zero too, without freeing it. So a list given back after the last id is gone leaves the
 * protection domain allocated (one per device, in {@code rdma res}) until some later id comes and goes.
 * {@link #giveBack} therefore binds an anchor id to each device of the lists first (to an IP address among the
 * device's GIDs), frees the lists, and destroys the anchors last: the last reference given back is then always an
 * id's, and librdmacm frees its protection domain when nothing else refers to the device. A device with no IP address
 * (or one being removed, which librdmacm frees on its own) gets no anchor.
 */
final class DeviceList {
    private DeviceList() {
    }

    /** rdma_free_devices(3) on each non-zero list, with an anchor id on each device they hold while it runs. */
    static void giveBack(long... lists) {
        Set<Long> contexts = new LinkedHashSet<>();
        for (long list : lists) {
            for (long i = 0; list != 0 && Mem.getLong(list + 8 * i) != 0; i++) {
                contexts.add(Mem.getLong(list + 8 * i));
            }
        }
        List<Long> anchors = new ArrayList<>();
        try {
            for (long context : contexts) {
                long anchor = anchor(context);
                if (anchor != 0) {
                    anchors.add(anchor);
                }
            }
        } finally {
            for (long list : lists) {
                if (list != 0) {
                    RdmaCma.rdma_free_devices(list);
                }
            }
            for (long anchor : anchors) {
                RdmaCma.rdma_destroy_id(anchor); // a failure leaves the id, and nothing worse than before
            }
        }
    }

    /** A synchronous id (its own event channel) bound to an IP address of the device, or 0 when none can be. */
    private static long anchor(long context) {
        InetSocketAddress address = ipAddressOf(context);
        if (address == null) {
            return 0;
        }
        try (Memory out = Mem.allocate(8); Memory sockaddr = Mem.allocate(Layout.SIZEOF_SOCKADDR_STORAGE)) {
            if (RdmaCma.rdma_create_id(0, Mem.address(out), 0, PortSpace.TCP.value()) != 0) {
                return 0;
            }
            long id = out.getLong(0);
            Mem.clear(Mem.address(sockaddr), Layout.SIZEOF_SOCKADDR_STORAGE);
            SocketAddresses.write(address, Mem.address(sockaddr), "anchor address");
            if (RdmaCma.rdma_bind_addr(id, Mem.address(sockaddr)) != 0
                || Mem.getLong(id + Layout.RDMA_CM_ID_VERBS) != context) {
                RdmaCma.rdma_destroy_id(id);
                return 0;
            }
            return id;
        }
    }

    /**
     * An IP address of the device (port 0) from its GID table (_ibv_query_gid_table): an IPv4-mapped GID first (RoCE
     * on IPv4), else a global IPv6 one; null when it has neither or the table cannot be read.
     */
    static InetSocketAddress ipAddressOf(long context) {
        int entries = gidTableLength(context);
        if (entries <= 0) {
            return null;
        }
        try (Memory table = Mem.allocate((long) entries * Layout.SIZEOF_IBV_GID_ENTRY)) {
            long n = IbVerbs._ibv_query_gid_table(context, Mem.address(table), entries, 0,
                Layout.SIZEOF_IBV_GID_ENTRY);
            InetAddress ipv6 = null;
            for (int i = 0; i < n; i++) {
                byte[] gid = table.getByteArray((long) i * Layout.SIZEOF_IBV_GID_ENTRY + Layout.IBV_GID_ENTRY_GID, 16);
                InetAddress ip = InetAddress.getByAddress(gid); // an IPv4-mapped one comes back as Inet4Address
                if (!(ip instanceof Inet6Address)) {
                    return new InetSocketAddress(ip, 0);
                }
                if (ipv6 == null && !ip.isLinkLocalAddress() && !ip.isAnyLocalAddress()) {
                    ipv6 = ip;
                }
            }
            return ipv6 == null ? null : new InetSocketAddress(ipv6, 0);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // cannot happen: 16 bytes
        }
    }

    /** The GID table entries of all ports together (ibv_query_device, ibv_query_port), 0 when unreadable. */
    private static int gidTableLength(long context) {
        try (Memory device = Mem.allocate(Layout.SIZEOF_IBV_DEVICE_ATTR);
             Memory port = Mem.allocate(Layout.SIZEOF_IBV_PORT_ATTR)) {
            if (IbVerbs.ibv_query_device(context, Mem.address(device)) != 0) {
                return 0;
            }
            int ports = Byte.toUnsignedInt(device.getByte(Layout.IBV_DEVICE_ATTR_PHYS_PORT_CNT));
            long total = 0;
            for (int p = 1; p <= ports; p++) {
                Mem.clear(Mem.address(port), Layout.SIZEOF_IBV_PORT_ATTR);
                if (IbVerbs.ibv_query_port(context, (byte) p, Mem.address(port)) != 0) {
                    return 0;
                }
                total += port.getInt(Layout.IBV_PORT_ATTR_GID_TBL_LEN);
            }
            return (int) Math.min(total, 1 << 16);
        }
    }
}
