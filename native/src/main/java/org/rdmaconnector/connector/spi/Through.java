package org.rdmaconnector.connector.spi;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * A delivery's {@link Deliveries.Done} (run once every endpoint given it is through with it), and its
 * phase: running while the delivery call runs, held once that call has returned before the delivery was through (a
 * paused endpoint holds it), counted once its owner has counted it as held, through. A completion's delivery is its
 * {@link InboundCompletion} itself: one object per delivery, none more.
 */
abstract class Through implements Deliveries.Done {
    private static final int RUNNING = 0;
    private static final int HELD = 1;
    private static final int COUNTED = 2;
    private static final int THROUGH = 3;
    private static final AtomicIntegerFieldUpdater<Through> PHASE =
        AtomicIntegerFieldUpdater.newUpdater(Through.class, "phase");
    private volatile int phase = RUNNING;

    /**
     * The delivery call returned.
     *
     * @return whether the delivery is not through yet: it is held from now on, until {@link #run()}; the owner counts
     *     it, then says so ({@link #counted()})
     */
    final boolean returned() {
        return PHASE.compareAndSet(this, RUNNING, HELD);
    }

    /**
     * The owner has counted the held delivery.
     *
     * @return false when it was through meanwhile, and its end ({@code over(false)}) did not count it off: the owner
     *     takes its count back
     */
    final boolean counted() {
        return PHASE.compareAndSet(this, HELD, COUNTED);
    }

    /** Whether the delivery is through ({@link #run()} was called). */
    final boolean isThrough() {
        return phase == THROUGH;
    }

    /** The delivery is through: {@link #over} runs, once, whoever calls this and however often. */
    @Override
    public final void run() {
        int was = PHASE.getAndSet(this, THROUGH);
        if (was != THROUGH) {
            over(was == COUNTED);
        }
    }

    /**
     * What the delivery's end does, run once.
     *
     * @param wasHeld whether it was counted as held ({@link #counted()}): its owner counts it off
     */
    abstract void over(boolean wasHeld);
}
