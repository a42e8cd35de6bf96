package org.rdmaconnector.verbs.jna;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import java.nio.charset.StandardCharsets;

/**
 * Drives a {@link ContextOps} without a device: its table holds libc functions whose arguments and results are
 * classed like the verbs' (pointers and ints in general-purpose registers, an int back), each one different, so a
 * mixed-up slot, a lost argument or a lost errno gives a wrong answer. Run in-process for JNA, and as the main class
 * of a child JVM of Java 22 or later for FFM (argument: the {@link OpsPath} that JVM must choose).
 */
final class ContextOpsCheck {
    private ContextOpsCheck() {
    }

    /** poll_cq: memchr(s, c, n); req_notify_cq: access(path, mode); post_send: memcmp; post_recv: strncmp. */
    static OpsTable libcTable() {
        return new OpsTable(libc("memchr"), libc("access"), libc("memcmp"), libc("strncmp"));
    }

    /** As {@link #libcTable()}, with open(path, flags, mode) in poll_cq's slot: the verb whose errno is kept. */
    static OpsTable errnoTable() {
        return new OpsTable(libc("open"), libc("access"), libc("memcmp"), libc("strncmp"));
    }

    private static long libc(String name) {
        return Pointer.nativeValue(NativeLibrary.getInstance("c").getFunction(name));
    }

    /** Calls each verb of {@code ops} over {@link #libcTable()} and throws an AssertionError at the first wrong answer. */
    static void verify(ContextOps ops) {
        try (Memory block = Mem.allocate(64)) {
            long at = Mem.address(block);
            // "ab\0x" and "ab\0y": memcmp sees them differ at byte 3, strncmp stops at the NUL
            long a = at;
            long b = at + 8;
            Mem.write(a, new byte[] {'a', 'b', 0, 'x'}, 0, 4);
            Mem.write(b, new byte[] {'a', 'b', 0, 'y'}, 0, 4);
            check("poll_cq slot (memchr of 'x' in 4 bytes)", (int) (a + 3), ops.ibv_poll_cq(a, 'x', 4));
            check("poll_cq slot (memchr of 'x' in 3 bytes)", 0, ops.ibv_poll_cq(a, 'x', 3));
            check("post_send slot (memcmp of 4 bytes)", -1, Integer.signum(ops.ibv_post_send(a, b, 4)));
            check("post_send slot (memcmp of 3 bytes)", 0, ops.ibv_post_send(a, b, 3));
            check("post_recv slot (strncmp of 4 bytes)", 0, ops.ibv_post_recv(a, b, 4));
            check("post_recv slot (strncmp of 4 bytes, swapped)", 0, ops.ibv_post_recv(b, a, 4));

            long root = at + 16;
            long missing = at + 24;
            Mem.write(root, "/\0".getBytes(StandardCharsets.US_ASCII), 0, 2);
            Mem.write(missing, "/no-such-dir\0".getBytes(StandardCharsets.US_ASCII), 0, 13);
            int fOk = 0; // access(2): F_OK, existence only
            check("req_notify_cq slot (access of /)", 0, ops.ibv_req_notify_cq(root, fOk));
            check("req_notify_cq slot (access of a missing path)", -1, ops.ibv_req_notify_cq(missing, fOk));
        }
    }

    /**
     * ibv_poll_cq keeps errno for {@link Mem#errno()}: a provider may return -1 with errno set. (The other verbs
     * return the errno itself, so it is not kept for them.) {@code overOpen} is bound to {@link #errnoTable()}.
     */
    static void verifyErrno(ContextOps overOpen) {
        try (Memory block = Mem.allocate(16)) {
            long missing = Mem.address(block);
            Mem.write(missing, "/no-such-dir\0".getBytes(StandardCharsets.US_ASCII), 0, 13);
            Native.setLastError(0);
            check("poll_cq slot (open of a missing path)", -1, overOpen.ibv_poll_cq(missing, 0, 0));
            check("errno after a failed ibv_poll_cq (ENOENT)", Layout.ENOENT, Mem.errno());
        }
    }

    /**
     * {@link Mem}'s reads and writes take the path this JVM chose ({@code expected}) and agree with JNA's own view of
     * the memory, byte for byte, at an odd address (no alignment is assumed) and with negative values (no widening
     * goes wrong).
     */
    static void verifyMemory(OpsPath expected) {
        if (Mem.accessPath() != expected) {
            throw new AssertionError("Mem reads and writes through " + Mem.accessPath() + ", not " + expected);
        }
        try (Memory block = Mem.allocate(32)) {
            long at = Mem.address(block) + 3;
            Mem.putLong(at, 0x8070605040302010L);
            checkLong("putLong, read by JNA", 0x8070605040302010L, block.getLong(3));
            block.setLong(3, -2L);
            checkLong("getLong of JNA's write", -2L, Mem.getLong(at));
            Mem.putInt(at + 8, 0xF1E2D3C4);
            check("putInt, read by JNA", 0xF1E2D3C4, block.getInt(11));
            block.setInt(11, -3);
            check("getInt of JNA's write", -3, Mem.getInt(at + 8));
            Mem.putShort(at + 12, (short) 0xBEEF);
            check("putShort, read by JNA", (short) 0xBEEF, block.getShort(15));
            block.setShort(15, (short) -4);
            check("getShort of JNA's write", -4, Mem.getShort(at + 12));
            Mem.putByte(at + 14, (byte) 0xA5);
            check("putByte, read by JNA", (byte) 0xA5, block.getByte(17));
            block.setByte(17, (byte) -5);
            check("getByte of JNA's write", -5, Mem.getByte(at + 14));
            checkLong("the long is untouched by the narrower writes after it", -2L, Mem.getLong(at));
        }
    }

    private static void checkLong(String what, long expected, long actual) {
        if (expected != actual) {
            throw new AssertionError(what + ": expected 0x" + Long.toHexString(expected) + " but was 0x"
                + Long.toHexString(actual));
        }
    }

    private static void check(String what, int expected, int actual) {
        if (expected != actual) {
            throw new AssertionError(what + ": expected " + expected + " but was " + actual);
        }
    }

    public static void main(String[] args) {
        OpsPath expected = OpsPath.valueOf(args[0]);
        if (OpsPath.chosen() != expected) {
            throw new AssertionError("chose " + OpsPath.chosen() + ", not " + expected + ": " + OpsPath.choiceReason());
        }
        ContextOps ops = OpsPath.chosen().bind(libcTable());
        verify(ops);
        verifyErrno(OpsPath.chosen().bind(errnoTable()));
        verifyMemory(expected);
        System.out.println("ContextOpsCheck passed: " + ops.path() + "; " + OpsPath.choiceReason());
    }
}
