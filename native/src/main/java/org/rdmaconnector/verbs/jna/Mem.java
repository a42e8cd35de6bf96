package org.rdmaconnector.verbs.jna;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.nio.charset.StandardCharsets;

/**
 * Reads and writes native memory at raw addresses returned by the C libraries, without allocating a {@link Pointer}
 * per access: {@code BASE} is a pointer to address 0, so {@code BASE.getInt(address)} reads at {@code address}.
 * Callers guarantee the address is live (the object model guards closed handles before calling here).
 */
public final class Mem {
    static {
        JnaSetup.prepare(); // before JNA's classes initialize
    }

    private static final Pointer BASE = new Pointer(0);

    private Mem() {
    }

    public static long getLong(long address) {
        return BASE.getLong(address);
    }

    public static int getInt(long address) {
        return BASE.getInt(address);
    }

    public static short getShort(long address) {
        return BASE.getShort(address);
    }

    public static byte getByte(long address) {
        return BASE.getByte(address);
    }

    public static void putLong(long address, long value) {
        BASE.setLong(address, value);
    }

    public static void putInt(long address, int value) {
        BASE.setInt(address, value);
    }

    public static void putShort(long address, short value) {
        BASE.setShort(address, value);
    }

    public static void putByte(long address, byte value) {
        BASE.setByte(address, value);
    }

    public static void read(long address, byte[] into, int offset, int length) {
        BASE.read(address, into, offset, length);
    }

    public static void write(long address, byte[] from, int offset, int length) {
        BASE.write(address, from, offset, length);
    }

    public static void clear(long address, long length) {
        BASE.setMemory(address, length, (byte) 0);
    }

    /** A NUL-terminated C string at {@code address}, or null for NULL. */
    public static String string(long address) {
        return address == 0 ? null : BASE.getString(address, StandardCharsets.UTF_8.name());
    }

    /** A JNA pointer object for APIs that need one (not for hot paths). */
    public static Pointer pointer(long address) {
        return address == 0 ? null : new Pointer(address);
    }

    /** The address of JNA-allocated memory. */
    public static long address(Memory memory) {
        return Pointer.nativeValue(memory);
    }

    /** Zeroed native memory of {@code size} bytes, freed when closed (JNA {@link Memory#close()}). */
    public static Memory allocate(long size) {
        Memory memory = new Memory(size);
        memory.clear();
        return memory;
    }

    /** errno of the last native call on this thread (JNA preserves it per thread). */
    public static int errno() {
        return Native.getLastError();
    }

    /** strerror(3) of {@code errno}. */
    public static String strerror(int errno) {
        return string(LibC.strerror(errno));
    }
}
