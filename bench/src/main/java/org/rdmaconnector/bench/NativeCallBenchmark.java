package org.rdmaconnector.bench;

import com.sun.jna.Function;
import com.sun.jna.NativeLibrary;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.CompilerControl;
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
import org.rdmaconnector.verbs.jna.IbVerbs;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.LibC;
import org.rdmaconnector.verbs.jna.Mem;

/**
 * The cost of one call through the bindings: a JNA direct-mapped call into libibverbs and into libc, against an
 * empty Java method that is not inlined (the floor: a Java call with the same shape, int in, long out). Neither
 * native call needs an RDMA device: {@code ibv_wc_status_str} only indexes a table of strings (its result address
 * is returned, not converted to a String), {@code fcntl(F_GETFL)} on an eventfd is the cheapest real syscall the
 * engine makes. {@link #functionInvokeIbvWcStatusStr} calls the same C function through {@link Function#invokeLong},
 * the path of the {@code static inline} verbs ({@code ibv_poll_cq}, {@code ibv_post_send}; see
 * {@code ContextOps} on Java 17; InlineVerbBenchmark compares the paths), for comparison.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class NativeCallBenchmark {
    // not final: the JIT must not treat the arguments as constants
    private int status = Layout.IBV_WC_WR_FLUSH_ERR;
    private int fd = -1;
    private Function wcStatusStr;

    @Setup(Level.Trial)
    public void setUp() {
        Throwable cause = IbVerbs.unavailabilityCause();
        if (cause != null) {
            throw new IllegalStateException("libibverbs (" + IbVerbs.LIBRARY + ") could not be bound", cause);
        }
        if (IbVerbs.ibv_wc_status_str(status) == 0) {
            throw new IllegalStateException("ibv_wc_status_str returned NULL");
        }
        fd = LibC.eventfd(0, Layout.EFD_NONBLOCK | Layout.EFD_CLOEXEC);
        if (fd < 0) {
            throw new IllegalStateException("eventfd failed: " + Mem.strerror(Mem.errno()));
        }
        int flags = LibC.fcntl(fd, Layout.F_GETFL, 0);
        if (flags < 0 || (flags & Layout.O_NONBLOCK) == 0) {
            throw new IllegalStateException("fcntl(F_GETFL) returned " + flags);
        }
        wcStatusStr = NativeLibrary.getInstance(IbVerbs.LIBRARY).getFunction("ibv_wc_status_str");
        if (wcStatusStr.invokeLong(new Object[] {status}) != IbVerbs.ibv_wc_status_str(status)) {
            throw new IllegalStateException("Function.invokeLong and the direct mapping disagree");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (fd >= 0) {
            LibC.close(fd);
            fd = -1;
        }
    }

    @CompilerControl(CompilerControl.Mode.DONT_INLINE)
    private static long emptyJavaMethod(int value) {
        return value;
    }

    /** Baseline: a Java call that is not inlined, with the same signature as ibv_wc_status_str. */
    @Benchmark
    public long baselineEmptyJavaMethod() {
        return emptyJavaMethod(status);
    }

    /** {@code const char *ibv_wc_status_str(enum ibv_wc_status)}: a pure library call, no syscall. */
    @Benchmark
    public long ibvWcStatusStr() {
        return IbVerbs.ibv_wc_status_str(status);
    }

    /** {@code fcntl(fd, F_GETFL, 0)} on an eventfd: the library call plus the cheapest syscall. */
    @Benchmark
    public int libcFcntlGetfl() {
        return LibC.fcntl(fd, Layout.F_GETFL, 0);
    }

    /** The same C function as {@link #ibvWcStatusStr} through {@code Function.invokeLong(Object[])}. */
    @Benchmark
    public long functionInvokeIbvWcStatusStr() {
        return wcStatusStr.invokeLong(new Object[] {status});
    }
}
