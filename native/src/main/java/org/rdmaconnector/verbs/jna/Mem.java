package org.rdmaconnector.verbs.jna;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

/**
 * Reads and writes native memory at raw addresses returned by the C libraries, without allocating a {@link Pointer}
 * per access. On the {@link OpsPath#FFM FFM} path (Java 22 and later) a value is read or written by the JDK's memory
 * access, which the JIT compiles to a plain load or store; else (and with {@code org.rdmaconnector.inlineVerbs=jna})
 * by JNA, a JNI call per access: {@code BASE} is a pointer to address 0, so {@code BASE.getInt(address)} reads at
 * {@code address}. Callers guarantee the address is live (the object model guards closed handles before calling
 * here).
 */
public final class Mem {
    static {
        JnaSetup.prepare(); // before JNA's classes initialize
    }

    private static final Pointer BASE = new Pointer(0);
    // the FFM path's accessors, (long address)T and (long address, T)void; all null on the JNA path
    private static final MethodHandle GET_LONG;
    private static final MethodHandle GET_INT;
    private static final MethodHandle GET_SHORT;
    private static final MethodHandle GET_BYTE;
    private static final MethodHandle PUT_LONG;
    private static final MethodHandle PUT_INT;
    private static final MethodHandle PUT_SHORT;
    private static final MethodHandle PUT_BYTE;

    static {
        MethodHandle[] accessors = new MethodHandle[8];
        if (OpsPath.chosen() == OpsPath.FFM) {
            try {
                accessors = FfmDowncalls.memoryAccessors();
            } catch (IllegalStateException e) { // the downcalls were built, so this is not expected: JNA's then
                System.getLogger(Mem.class.getName()).log(System.Logger.Level.WARNING, "native memory is read and "
                    + "written through JNA (a JNI call per access) on Java " + Runtime.version() + ": " + e, e);
            }
        }
        GET_LONG = accessors[0];
        GET_INT = accessors[1];
        GET_SHORT = accessors[2];
        GET_BYTE = accessors[3];
        PUT_LONG = accessors[4];
        PUT_INT = accessors[5];
        PUT_SHORT = accessors[6];
        PUT_BYTE = accessors[7];
    }

    private Mem() {
    }

    /** How values are read and written here: through the JDK's memory access ({@code FFM}) or JNA's. */
    public static OpsPath accessPath() {
        return GET_LONG != null ? OpsPath.FFM : OpsPath.JNA;
    }

    public static long getLong(long address) {
        if (GET_LONG != null) {
            try {
                return (long) GET_LONG.invokeExact(address);
            } catch (Throwable t) {
                throw FfmDowncalls.unexpected(t);
            }
        }
        return BASE.getLong(address);
    }

    public static int getInt(long address) {
        if (GET_INT != null) {
            try {
                return (int) GET_INT.invokeExact(address);
            } catch (Throwable t) {
                throw FfmDowncalls.unexpected(t);
            }
        }
        return BASE.getInt(address);
    }

    public static short getShort(long address) {
        if (GET_SHORT != null) {
            try {
                return (short) GET_SHORT.invokeExact(address);
            } catch (Throwable t) {
                throw FfmDowncalls.unexpected(t);
            }
        }
        return BASE.getShort(address);
    }

    public static byte getByte(long address) {
        if (GET_BYTE != null) {
            try {
                return (byte) GET_BYTE.invokeExact(address);
            } catch (Throwable t) {
                throw FfmDowncalls.unexpected(t);
            }
        }
        return BASE.getByte(address);
    }

    public static void putLong(long address, long value) {
        if (PUT_LONG != null) {
            try {
                PUT_LONG.invokeExact(address, value);
                return;
            } catch (Throwable t) {
                throw FfmDowncalls.unexpected(t);
            }
        }
        BASE.setLong(address, value);
    }

    public static void putInt(long address, int value) {
        if (PUT_INT != null) {
            try {
                PUT_INT.invokeExact(address, value);
                return;
            } catch (Throwable t) {
                throw FfmDowncalls.unexpected(t);
            }
        }
        BASE.setInt(address, value);
    }

    public static void putShort(long address, short value) {
        if (PUT_SHORT != null) {
            try {
                PUT_SHORT.invokeExact(address, value);
                return;
            } catch (Throwable t) {
                throw FfmDowncalls.unexpected(t);
            }
        }
        BASE.setShort(address, value);
    }

    public static void putByte(long address, byte value) {
        if (PUT_BYTE != null) {
            try {
                PUT_BYTE.invokeExact(address, value);
                return;
            } catch (Throwable t) {
                throw FfmDowncalls.unexpected(t);
            }
        }
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
