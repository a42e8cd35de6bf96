package org.rdmaconnector.verbs;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;

/** {@code struct sockaddr_in}/{@code sockaddr_in6} to and from {@link InetSocketAddress}. */
final class SocketAddresses {
    private SocketAddresses() {
    }

    /** Writes {@code address} as a sockaddr at {@code to} (at least sizeof(sockaddr_in6) bytes, zeroed). */
    static void write(InetSocketAddress address, long to, String name) {
        if (address == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        if (address.isUnresolved()) {
            throw new IllegalArgumentException(name + " is unresolved: " + address.getHostString());
        }
        InetAddress ip = address.getAddress();
        short port = Short.reverseBytes((short) address.getPort());
        byte[] bytes = ip.getAddress();
        if (ip instanceof Inet4Address) {
            Mem.putShort(to + Layout.SOCKADDR_IN_SIN_FAMILY, (short) Layout.AF_INET);
            Mem.putShort(to + Layout.SOCKADDR_IN_SIN_PORT, port);
            Mem.write(to + Layout.SOCKADDR_IN_SIN_ADDR, bytes, 0, 4);
        } else {
            Mem.putShort(to + Layout.SOCKADDR_IN6_SIN6_FAMILY, (short) Layout.AF_INET6);
            Mem.putShort(to + Layout.SOCKADDR_IN6_SIN6_PORT, port);
            Mem.write(to + Layout.SOCKADDR_IN6_SIN6_ADDR, bytes, 0, 16);
            Mem.putInt(to + Layout.SOCKADDR_IN6_SIN6_SCOPE_ID, ((Inet6Address) ip).getScopeId());
        }
    }

    /** The address of the sockaddr at {@code from}, or null if its family is neither AF_INET nor AF_INET6. */
    static InetSocketAddress read(long from) {
        int family = Short.toUnsignedInt(Mem.getShort(from));
        try {
            if (family == Layout.AF_INET) {
                byte[] bytes = new byte[4];
                Mem.read(from + Layout.SOCKADDR_IN_SIN_ADDR, bytes, 0, 4);
                return new InetSocketAddress(InetAddress.getByAddress(bytes),
                    Short.toUnsignedInt(Short.reverseBytes(Mem.getShort(from + Layout.SOCKADDR_IN_SIN_PORT))));
            }
            if (family == Layout.AF_INET6) {
                byte[] bytes = new byte[16];
                Mem.read(from + Layout.SOCKADDR_IN6_SIN6_ADDR, bytes, 0, 16);
                return new InetSocketAddress(Inet6Address.getByAddress(null, bytes,
                    Mem.getInt(from + Layout.SOCKADDR_IN6_SIN6_SCOPE_ID)),
                    Short.toUnsignedInt(Short.reverseBytes(Mem.getShort(from + Layout.SOCKADDR_IN6_SIN6_PORT))));
            }
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // cannot happen: the byte arrays have the right length
        }
        return null;
    }
}
