package org.rdmaconnector.connector.spi;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * An address block in CIDR notation ({@code 10.0.0.0/24}, {@code fd00::/8}, or one address).
 *
 * @param network the network address, its host bits zero
 * @param prefixLength bits of the prefix
 */
public record Cidr(InetAddress network, int prefixLength) {
    /**
     * Parses one block.
     *
     * @throws IllegalArgumentException naming the text when it is not an IP address with an optional valid prefix
     */
    public static Cidr parse(String text) {
        String t = text == null ? "" : text.trim();
        int slash = t.indexOf('/');
        InetAddress address = literal(slash < 0 ? t : t.substring(0, slash));
        if (address == null) {
            throw new IllegalArgumentException("allowed peer '" + text + "' is not an IP address or CIDR block");
        }
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

    /** The IPv4 or IPv6 address {@code text} spells (trimmed), or null when it is no address literal (never a name). */
    static InetAddress literal(String text) {
        String t = text == null ? "" : text.trim();
        if (!t.matches("[0-9.]+|[0-9a-fA-F:.]*:[0-9a-fA-F:.]*")) {
            return null;
        }
        try {
            return InetAddress.getByName(t); // a literal: no name lookup
        } catch (UnknownHostException e) {
            return null;
        }
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
