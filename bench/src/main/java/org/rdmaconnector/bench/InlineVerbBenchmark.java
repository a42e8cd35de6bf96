package org.rdmaconnector.bench;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.rdmaconnector.verbs.jna.ContextOps;
import org.rdmaconnector.verbs.jna.FfmDowncalls;
import org.rdmaconnector.verbs.jna.Mem;
import org.rdmaconnector.verbs.jna.OpsPath;
import org.rdmaconnector.verbs.jna.OpsTable;

/**
 * The cost of one inline verb call ({@code ibv_poll_cq}, {@code ibv_post_send}: a function pointer of
 * {@code ibv_context->ops}) on each path of {@link ContextOps}, against a JNA direct-mapped call of the same C
 * function. No RDMA device is needed: the ops table holds libc functions reached by address whose arguments and
 * result go in the same registers as the verbs'. The poll shape {@code (pointer, int, pointer) -> int} is
 * {@code memchr(s, c, n)} (its pointer result read as an int, as poll_cq's), looking for a byte that is not in 8
 * bytes; the post shape {@code (pointer, pointer, pointer) -> int} is {@code memcmp(a, b, n)} of 8 equal bytes.
 * The {@code Ffm} benchmarks need Java 22 or later (run the jar with that JDK's {@code java}); on Java 17 select
 * the others ({@code 'InlineVerbBenchmark.*Jna'}).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@State(Scope.Thread)
public class InlineVerbBenchmark {
    private static final int BYTES = 8;
    // not final: the JIT must not treat the arguments as constants
    private long a;
    private long b;
    private int absent = 'z';
    private long length = BYTES;
    private Memory block;
    private OpsTable libc;
    private ContextOps jna;

    /** libc by name, direct-mapped: the cost a direct-mapped verb would have. */
    public static final class LibcDirect {
        static {
            Native.register(LibcDirect.class, NativeLibrary.getInstance("c"));
        }

        private LibcDirect() {
        }

        static native int memchr(long s, int c, long n);

        static native int memcmp(long s1, long s2, long n);
    }

    /** The FFM path (Java 22 and later), and a poll-shaped handle without {@code Linker.Option.critical}. */
    @State(Scope.Thread)
    public static class Ffm {
        static final MethodHandle POLL_SHAPE_NOT_CRITICAL = FfmDowncalls.unavailabilityCause() != null ? null
            : FfmDowncalls.downcall(false, long.class, int.class, long.class);
        ContextOps ops;
        Object pollCq;

        @Setup(Level.Trial)
        public void setUp(InlineVerbBenchmark bench) {
            if (FfmDowncalls.unavailabilityCause() != null) {
                throw new IllegalStateException("the FFM benchmarks need Java 22 or later: "
                    + FfmDowncalls.unavailabilityCause());
            }
            ops = OpsPath.FFM.bind(bench.libc);
            pollCq = FfmDowncalls.function(bench.libc.pollCq());
            bench.check(ops);
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        block = Mem.allocate(2 * BYTES);
        a = Mem.address(block);
        b = a + BYTES;
        NativeLibrary c = NativeLibrary.getInstance("c");
        long memchr = Pointer.nativeValue(c.getFunction("memchr"));
        long memcmp = Pointer.nativeValue(c.getFunction("memcmp"));
        libc = new OpsTable(memchr, memchr, memcmp, memcmp);
        jna = OpsPath.JNA.bind(libc);
        check(jna);
        if (LibcDirect.memchr(a, absent, length) != 0 || LibcDirect.memcmp(a, b, length) != 0) {
            throw new IllegalStateException("the direct mapping gives other answers");
        }
    }

    void check(ContextOps ops) {
        block.setByte(3, (byte) absent);
        int found = ops.ibv_poll_cq(a, absent, length);
        block.setByte(3, (byte) 0);
        if (found != (int) (a + 3) || ops.ibv_poll_cq(a, absent, length) != 0 || ops.ibv_post_send(a, b, length) != 0) {
            throw new IllegalStateException(ops.path() + " gives wrong answers");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        block.close();
    }

    /** The poll shape through JNA's {@code Function.invokeInt(Object[])}: the JNA path. */
    @Benchmark
    public int pollShapeJnaFunction() {
        return jna.ibv_poll_cq(a, absent, length);
    }

    /** The poll shape, JNA direct mapping by name: the cost to reach. */
    @Benchmark
    public int pollShapeJnaDirect() {
        return LibcDirect.memchr(a, absent, length);
    }

    /** The poll shape through the FFM path (critical, errno captured). */
    @Benchmark
    public int pollShapeFfm(Ffm ffm) {
        return ffm.ops.ibv_poll_cq(a, absent, length);
    }

    /** The poll shape through an FFM handle that is not critical (a thread state transition per call). */
    @Benchmark
    public int pollShapeFfmNotCritical(Ffm ffm) throws Throwable {
        Object state = FfmDowncalls.callState();
        return FfmDowncalls.keepErrno((int) Ffm.POLL_SHAPE_NOT_CRITICAL.invokeExact(ffm.pollCq, state, a, absent,
            length), state);
    }

    /** The post shape through JNA's {@code Function.invokeInt(Object[])}: the JNA path. */
    @Benchmark
    public int postShapeJnaFunction() {
        return jna.ibv_post_send(a, b, length);
    }

    /** The post shape, JNA direct mapping by name. */
    @Benchmark
    public int postShapeJnaDirect() {
        return LibcDirect.memcmp(a, b, length);
    }

    /** The post shape through the FFM path (not critical, errno captured). */
    @Benchmark
    public int postShapeFfm(Ffm ffm) {
        return ffm.ops.ibv_post_send(a, b, length);
    }
}
