package org.rdmaconnector.bench;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;
import org.rdmaconnector.verbs.jna.OpsPath;

/**
 * The cost of what a post writes and a polled completion reads in native memory: the fields of an
 * {@code ibv_send_wr} with its {@code ibv_sge} (ten stores, as {@code QueuePair}'s post), and eight fields of an
 * {@code ibv_wc} (loads, as {@code WorkCompletions.read}), through {@link Mem} (the JDK's memory access on Java 22 and
 * later, {@code Mem.accessPath()}) and through JNA's {@code Pointer} (a JNI call per access, {@code Mem}'s path on
 * Java 17 and with {@code -Dorg.rdmaconnector.inlineVerbs=jna}). No RDMA device is needed.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@State(Scope.Thread)
public class MemAccessBenchmark {
    private static final Pointer BASE = new Pointer(0);
    private Memory block;
    private long wr;
    // not final: the JIT must not treat the values as constants
    private long wrId = 42;
    private int length = 4096;

    @Setup
    public void setUp() {
        if (Runtime.version().feature() >= 22 && Mem.accessPath() != OpsPath.FFM) {
            throw new IllegalStateException("Mem reads and writes through " + Mem.accessPath() + " on Java "
                + Runtime.version() + " (FFM expected)");
        }
        block = Mem.allocate(Layout.SIZEOF_IBV_SEND_WR + Layout.SIZEOF_IBV_SGE + 64);
        wr = Mem.address(block);
    }

    @TearDown
    public void tearDown() {
        block.close();
    }

    @Benchmark
    public void postFieldsMem() {
        long sge = wr + Layout.SIZEOF_IBV_SEND_WR;
        Mem.putLong(sge, wr);
        Mem.putInt(sge + 8, length);
        Mem.putInt(sge + 12, 7);
        Mem.putLong(wr + Layout.IBV_SEND_WR_WR_ID, wrId);
        Mem.putLong(wr + Layout.IBV_SEND_WR_SG_LIST, sge);
        Mem.putInt(wr + Layout.IBV_SEND_WR_NUM_SGE, 1);
        Mem.putInt(wr + Layout.IBV_SEND_WR_OPCODE, Layout.IBV_WR_RDMA_WRITE);
        Mem.putInt(wr + Layout.IBV_SEND_WR_SEND_FLAGS, 0);
        Mem.putLong(wr + Layout.IBV_SEND_WR_WR_RDMA_REMOTE_ADDR, wrId);
        Mem.putInt(wr + Layout.IBV_SEND_WR_WR_RDMA_RKEY, length);
    }

    @Benchmark
    public void postFieldsJna() {
        long sge = wr + Layout.SIZEOF_IBV_SEND_WR;
        BASE.setLong(sge, wr);
        BASE.setInt(sge + 8, length);
        BASE.setInt(sge + 12, 7);
        BASE.setLong(wr + Layout.IBV_SEND_WR_WR_ID, wrId);
        BASE.setLong(wr + Layout.IBV_SEND_WR_SG_LIST, sge);
        BASE.setInt(wr + Layout.IBV_SEND_WR_NUM_SGE, 1);
        BASE.setInt(wr + Layout.IBV_SEND_WR_OPCODE, Layout.IBV_WR_RDMA_WRITE);
        BASE.setInt(wr + Layout.IBV_SEND_WR_SEND_FLAGS, 0);
        BASE.setLong(wr + Layout.IBV_SEND_WR_WR_RDMA_REMOTE_ADDR, wrId);
        BASE.setInt(wr + Layout.IBV_SEND_WR_WR_RDMA_RKEY, length);
    }

    @Benchmark
    public long completionFieldsMem() {
        long wc = wr;
        return Mem.getLong(wc) + Mem.getInt(wc + 8) + Mem.getInt(wc + 12) + Mem.getInt(wc + 16) + Mem.getInt(wc + 20)
            + Mem.getInt(wc + 24) + Mem.getInt(wc + 28) + Mem.getInt(wc + 32);
    }

    @Benchmark
    public long completionFieldsJna() {
        long wc = wr;
        return BASE.getLong(wc) + BASE.getInt(wc + 8) + BASE.getInt(wc + 12) + BASE.getInt(wc + 16)
            + BASE.getInt(wc + 20) + BASE.getInt(wc + 24) + BASE.getInt(wc + 28) + BASE.getInt(wc + 32);
    }
}
