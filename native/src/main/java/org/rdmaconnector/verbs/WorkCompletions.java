package org.rdmaconnector.verbs;

import com.sun.jna.Memory;
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;

/**
 * A reusable array of {@code struct ibv_wc} that {@link CompletionQueue#poll(WorkCompletions)} fills, read in place
 * so the polling path allocates nothing. Not thread-safe: one poller at a time.
 */
public final class WorkCompletions implements AutoCloseable {
    /** The largest batch: bounded so one poll cannot pin unbounded native memory. */
    public static final int MAX_CAPACITY = 4096;

    private final Memory memory;
    private final long base;
    private final int capacity;
    private int count;
    private boolean closed;

    /** An array of {@code capacity} entries, from 1 to {@link #MAX_CAPACITY}. */
    public WorkCompletions(int capacity) {
        if (capacity < 1 || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("capacity must be from 1 to " + MAX_CAPACITY + ", was " + capacity);
        }
        this.capacity = capacity;
        this.memory = Mem.allocate((long) capacity * Layout.SIZEOF_IBV_WC);
        this.base = Mem.address(memory);
    }

    /** How many entries a poll may fill. */
    public int capacity() {
        return capacity;
    }

    /** How many entries the last poll filled. */
    public int count() {
        return count;
    }

    /** A copy of entry {@code index}. */
    public WorkCompletion get(int index) {
        PolledCompletion polled = new PolledCompletion();
        read(index, polled);
        return polled.toWorkCompletion();
    }

    /** Reads entry {@code index} into {@code into}, which it fills anew (no object made). */
    public void read(int index, PolledCompletion into) {
        long wc = entry(index);
        into.set(Mem.getLong(wc + Layout.IBV_WC_WR_ID), Mem.getInt(wc + Layout.IBV_WC_STATUS),
            WcOpcode.of(Mem.getInt(wc + Layout.IBV_WC_OPCODE)), Mem.getInt(wc + Layout.IBV_WC_VENDOR_ERR),
            Mem.getInt(wc + Layout.IBV_WC_BYTE_LEN), QueuePair.toNetworkOrder(Mem.getInt(wc + Layout.IBV_WC_IMM_DATA)),
            Mem.getInt(wc + Layout.IBV_WC_QP_NUM), Mem.getInt(wc + Layout.IBV_WC_SRC_QP),
            Mem.getInt(wc + Layout.IBV_WC_WC_FLAGS));
    }

    /** wr_id of entry {@code index}. */
    public long wrId(int index) {
        return Mem.getLong(entry(index) + Layout.IBV_WC_WR_ID);
    }

    /** status of entry {@code index}. */
    public int status(int index) {
        return Mem.getInt(entry(index) + Layout.IBV_WC_STATUS);
    }

    /** byte_len of entry {@code index}. */
    public int byteLength(int index) {
        return Mem.getInt(entry(index) + Layout.IBV_WC_BYTE_LEN);
    }

    /** qp_num of entry {@code index}. */
    public int qpNumber(int index) {
        return Mem.getInt(entry(index) + Layout.IBV_WC_QP_NUM);
    }

    private long entry(int index) {
        if (index < 0 || index >= count) {
            throw new IndexOutOfBoundsException("index " + index + " outside the " + count + " polled entries");
        }
        return base + (long) index * Layout.SIZEOF_IBV_WC;
    }

    long address() {
        if (closed) {
            throw new IllegalStateException("WorkCompletions is closed");
        }
        return base;
    }

    void filled(int n) {
        count = n;
    }

    /** Frees the native array. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            count = 0;
            memory.close();
        }
    }
}
