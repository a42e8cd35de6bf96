package org.rdmaconnector.connector;

import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * A peer's registered memory region as the peer hands it over: the address of its first byte, its length, its rkey,
 * and the {@link RemoteAccess} its owner registered it with. Encoded in {@value #ENCODED_LENGTH} bytes
 * ({@link #toBytes()}, {@link #fromBytes(byte[])}) so that it fits a message or connection private data. The rkey
 * stays valid until its owner closes the region; an access after that fails at the peer, as a work completion with
 * status {@code IBV_WC_REM_ACCESS_ERR}.
 *
 * @param address the virtual address of the region's first byte, as the peer registered it
 * @param length the region's length in bytes
 * @param rkey the remote key
 * @param access what the owner allows (an unmodifiable copy)
 */
public record RemoteRegion(long address, int length, int rkey, Set<RemoteAccess> access) {
    /** Bytes of the encoded form: format, access, address, length, rkey, in network byte order. */
    public static final int ENCODED_LENGTH = 18;
    private static final byte FORMAT = 1;
    private static final int READ_BIT = 1;
    private static final int WRITE_BIT = 2;

    /**
     * @throws IllegalArgumentException when {@code length} is negative or {@code access} is null
     */
    public RemoteRegion {
        if (length < 0) {
            throw new IllegalArgumentException("length must be at least 0, was " + length);
        }
        if (access == null) {
            throw new IllegalArgumentException("access must not be null (an empty set for a region peers may not "
                + "access)");
        }
        access = access.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(access));
    }

    /** Whether the owner allows {@code what}. */
    public boolean allows(RemoteAccess what) {
        return access.contains(what);
    }

    /** The encoded form: {@value #ENCODED_LENGTH} bytes. */
    public byte[] toBytes() {
        ByteBuffer out = ByteBuffer.allocate(ENCODED_LENGTH); // big-endian: network byte order
        out.put(FORMAT);
        out.put((byte) ((allows(RemoteAccess.READ) ? READ_BIT : 0) | (allows(RemoteAccess.WRITE) ? WRITE_BIT : 0)));
        out.putLong(address);
        out.putInt(length);
        out.putInt(rkey);
        return out.array();
    }

    /** Puts the encoded form at {@code target}'s position and advances it by {@value #ENCODED_LENGTH}. */
    public ByteBuffer writeTo(ByteBuffer target) {
        return target.put(toBytes());
    }

    /**
     * Decodes the first {@value #ENCODED_LENGTH} bytes of {@code bytes}.
     *
     * @throws IllegalArgumentException when they are too few or not an encoded RemoteRegion
     */
    public static RemoteRegion fromBytes(byte[] bytes) {
        if (bytes == null) {
            throw new IllegalArgumentException("bytes must not be null");
        }
        return readFrom(ByteBuffer.wrap(bytes));
    }

    /**
     * Decodes a region at {@code source}'s position and advances it by {@value #ENCODED_LENGTH}.
     *
     * @throws IllegalArgumentException when fewer bytes remain or they are not an encoded RemoteRegion (then the
     *     position is unchanged)
     */
    public static RemoteRegion readFrom(ByteBuffer source) {
        if (source == null || source.remaining() < ENCODED_LENGTH) {
            throw new IllegalArgumentException("an encoded RemoteRegion takes " + ENCODED_LENGTH + " bytes, "
                + (source == null ? "got none" : source.remaining() + " remain"));
        }
        byte[] bytes = new byte[ENCODED_LENGTH];
        source.duplicate().get(bytes);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        byte format = in.get();
        if (format != FORMAT) {
            throw new IllegalArgumentException("not an encoded RemoteRegion: format byte " + format + ", expected "
                + FORMAT);
        }
        int bits = in.get();
        if ((bits & ~(READ_BIT | WRITE_BIT)) != 0) {
            throw new IllegalArgumentException("not an encoded RemoteRegion: access bits " + bits + " (read is "
                + READ_BIT + ", write " + WRITE_BIT + ")");
        }
        EnumSet<RemoteAccess> access = EnumSet.noneOf(RemoteAccess.class);
        if ((bits & READ_BIT) != 0) {
            access.add(RemoteAccess.READ);
        }
        if ((bits & WRITE_BIT) != 0) {
            access.add(RemoteAccess.WRITE);
        }
        long address = in.getLong();
        int length = in.getInt();
        if (length < 0) {
            throw new IllegalArgumentException("not an encoded RemoteRegion: length " + length);
        }
        RemoteRegion region = new RemoteRegion(address, length, in.getInt(), access);
        source.position(source.position() + ENCODED_LENGTH);
        return region;
    }

    @Override
    public String toString() {
        return "RemoteRegion[address 0x" + Long.toHexString(address) + ", " + length + " bytes, rkey 0x"
            + Integer.toHexString(rkey) + ", " + (access.isEmpty() ? "no remote access" : "remote " + access) + "]";
    }
}
