package org.rdmaconnector.connector.spi;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * An address block in CIDR notation ({@code 10.0.0.0/24}, {@code fd00::/8}, or one address). Addresses are read
 * strictly: a full dotted-quad IPv4 address or an RFC 4291 IPv6 text form, never a host name.
 *
 * @param network the network address, its host bits zero
 * @param prefixLength bits of the prefix
 */
public record Cidr(InetAddress network, int prefixLength) {
    /** Why a text is no address, after its quoted text; more may follow after a colon. */
    static final String NOT_AN_ADDRESS = "is not a full IPv4 address (four decimal octets) or an IPv6 address";

    /**
     * Parses one block.
     *
     * @throws IllegalArgumentException naming the text when it is not an IP address with an optional valid prefix
     */
    public static Cidr parse(String text) {
        String t = text == null ? "" : text.trim();
        int slash = t.indexOf('/');
        String why = whyNotALiteral(slash < 0 ? t : t.substring(0, slash));
        if (why != null) {
            throw new IllegalArgumentException("allowed peer '" + text + "' " + NOT_AN_ADDRESS + why);
        }
        InetAddress address = literal(slash < 0 ? t : t.substring(0, slash));
        int bits = address.getAddress().length * 8;
        int prefix;
        try {
            prefix = slash < 0 ? bits : Integer.parseInt(t.substring(slash + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("allowed peer '" + text + "' has no valid prefix length", e);
        }
        if (prefix < 0 || prefix > bits) {
            throw new IllegalArgumentException("allowed peer '" + text + "': prefix length must be from 0 to " + bits);
        }
        byte[] masked = mask(address.getAddress(), prefix);
        try {
            return new Cidr(InetAddress.getByAddress(masked), prefix);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The IPv4 or IPv6 address {@code text} spells (trimmed), or null when it is no full address literal (never a
     * name). An IPv4-mapped IPv6 address ({@code ::ffff:10.0.0.1}) is its IPv4 address.
     */
    static InetAddress literal(String text) {
        String t = text == null ? "" : text.trim();
        byte[] bytes = t.indexOf(':') < 0 ? ipv4(t) : ipv6(t);
        if (bytes == null) {
            return null;
        }
        try {
            return InetAddress.getByAddress(bytes); // no name lookup
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // 4 or 16 bytes
        }
    }

    /**
     * The one text of a listen address: {@code ::ffff:10.0.0.1} and {@code 10.0.0.1} give the same, as do
     * {@code fd00:0::1} and {@code fd00::1}.
     *
     * @throws IllegalArgumentException naming the text when it is no address literal
     */
    public static String canonical(String text) {
        InetAddress address = literal(text);
        if (address == null) {
            throw new IllegalArgumentException(addressProblem(text));
        }
        return address.getHostAddress();
    }

    /** The problem of a listen address (property Address), or null when it is an address literal. */
    static String addressProblem(String text) {
        String why = whyNotALiteral(text);
        return why == null ? null : "Address '" + text + "' is not an IP address" + why;
    }

    /**
     * Null when {@code text} is an address literal, else what to add after {@link #NOT_AN_ADDRESS}: empty, or a colon
     * and the particular reason.
     */
    static String whyNotALiteral(String text) {
        String t = text == null ? "" : text.trim();
        if (literal(t) != null) {
            return null;
        }
        if (t.indexOf('%') >= 0) {
            return ": a zone id (%) is not allowed";
        }
        if (t.startsWith("[")) {
            return ": give the address without brackets";
        }
        if (t.contains(".") && t.matches("[0-9.:a-fA-F]+") && t.matches(".*(^|[.:])0[0-9]+(\\.|$).*")) {
            return ": an octet has a leading zero (some parsers read it as octal)";
        }
        return "";
    }

    // Four decimal octets 0-255, no sign, no leading zero: InetAddress would take "10.1" as 10.0.0.1.
    private static byte[] ipv4(String t) {
        if (!t.matches("(0|[1-9][0-9]{0,2})(\\.(0|[1-9][0-9]{0,2})){3}")) {
            return null;
        }
        String[] octets = t.split("\\.");
        byte[] bytes = new byte[4];
        for (int i = 0; i < 4; i++) {
            int octet = Integer.parseInt(octets[i]);
            if (octet > 255) {
                return null;
            }
            bytes[i] = (byte) octet;
        }
        return bytes;
    }

    // RFC 4291 2.2: eight groups of 1-4 hex digits, one "::" for one or more zero groups, an IPv4 tail for two.
    private static byte[] ipv6(String t) {
        int gap = t.indexOf("::");
        if (gap >= 0 && t.indexOf("::", gap + 1) >= 0) {
            return null; // also ":::"
        }
        List<Integer> head = groups(gap < 0 ? t : t.substring(0, gap), gap < 0);
        List<Integer> tail = gap < 0 ? List.of() : groups(t.substring(gap + 2), true);
        if (head == null || tail == null) {
            return null;
        }
        int count = head.size() + tail.size();
        if (gap < 0 ? count != 8 : count > 7) {
            return null;
        }
        byte[] bytes = new byte[16];
        for (int i = 0; i < head.size(); i++) {
            bytes[2 * i] = (byte) (head.get(i) >> 8);
            bytes[2 * i + 1] = (byte) (int) head.get(i);
        }
        for (int i = 0; i < tail.size(); i++) {
            int at = 8 - tail.size() + i;
            bytes[2 * at] = (byte) (tail.get(i) >> 8);
            bytes[2 * at + 1] = (byte) (int) tail.get(i);
        }
        return bytes;
    }

    // The 16-bit groups of one side of "::"; an IPv4 address may end the address (the last side only), as two.
    private static List<Integer> groups(String side, boolean last) {
        List<Integer> groups = new ArrayList<>();
        if (side.isEmpty()) {
            return groups;
        }
        String[] parts = side.split(":", -1);
        for (int i = 0; i < parts.length; i++) {
            String part = parts[i];
            if (part.matches("[0-9a-fA-F]{1,4}")) {
                groups.add(Integer.parseInt(part, 16));
            } else if (last && i == parts.length - 1 && ipv4(part) != null) {
                byte[] v4 = ipv4(part);
                groups.add((v4[0] & 0xff) << 8 | v4[1] & 0xff);
                groups.add((v4[2] & 0xff) << 8 | v4[3] & 0xff);
            } else {
                return null;
            }
        }
        return groups;
    }

    /** Parses a list separated by commas or white space; null or blank is the empty list. */
    public static List<Cidr> parseList(String text) {
        List<Cidr> list = new ArrayList<>();
        if (text != null) {
            for (String part : text.split("[,\\s]+")) {
                if (!part.isEmpty()) {
                    list.add(parse(part));
                }
            }
        }
        return list;
    }

    /** Whether {@code address} lies in this block (an IPv4 block never contains an IPv6 address, and back). */
    public boolean contains(InetAddress address) {
        byte[] bytes = address.getAddress();
        return bytes.length == network.getAddress().length
            && java.util.Arrays.equals(mask(bytes, prefixLength), network.getAddress());
    }

    private static byte[] mask(byte[] bytes, int prefix) {
        byte[] out = bytes.clone();
        for (int i = 0; i < out.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - i * 8));
            out[i] &= (byte) (0xff << (8 - keep));
        }
        return out;
    }

    @Override
    public String toString() {
        return network.getHostAddress() + "/" + prefixLength;
    }
}
