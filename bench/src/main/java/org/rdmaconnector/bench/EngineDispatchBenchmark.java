package org.rdmaconnector.bench;

import com.sun.jna.Memory;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.rdmaconnector.verbs.engine.EventEngine;
import org.rdmaconnector.verbs.engine.EventSource;
import org.rdmaconnector.verbs.engine.Registration;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.LibC;
import org.rdmaconnector.verbs.jna.Mem;

/**
 * The event engine's dispatch rate, readiness to delivery: {@link #fds} semaphore eventfds registered with one
 * {@link EventEngine}; each source's {@code next()} reads 8 bytes (one event per read, null on EAGAIN) and returns a
 * shared constant, the handler counts. One operation writes {@value #BATCH} events (one {@code write} per eventfd,
 * the counts split evenly) and parks until the handler has seen them all; the score is therefore events per second
 * and {@code gc.alloc.rate.norm} is bytes per event, all threads included (JMH's GC profiler sums the allocation of
 * every thread, so the loop and executor threads are counted). The event objects allocate nothing, so what
 * {@code -prof gc} shows is the engine's own allocation (and the executor's).
 *
 * <p>{@code executor=direct} delivers on the loop thread ({@code Runnable::run}): one core does everything.
 * {@code executor=single} hands each delivery task to a single-thread {@link ExecutorService}: the loop and the
 * deliveries run on the two cores of the machine.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@Threads(1)
@State(Scope.Benchmark)
public class EngineDispatchBenchmark {
    /** Events per operation. */
    public static final int BATCH = 1000;
    /**
     * EFD_SEMAPHORE (each read returns 1 and decrements the counter by 1) from
     * /usr/include/x86_64-linux-gnu/bits/eventfd.h, included by /usr/include/x86_64-linux-gnu/sys/eventfd.h:
     * {@code EFD_SEMAPHORE = 00000001}. Layout does not declare it (the bindings do not use it).
     */
    static final int EFD_SEMAPHORE = 1;
    // the shared event: a cached Integer, so reading an event allocates nothing
    static final Integer EVENT = 1;
    // a safety net only: the handler unparks the benchmark thread when the batch is complete
    private static final long PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    @Param({"1", "4"})
    public int fds;

    @Param({"direct", "single"})
    public String executor;

    private EventEngine engine;
    private ExecutorService pool;
    private int[] eventFds;
    private Registration[] registrations;
    private Memory writeBuffer;
    private long[] perFd;
    private final AtomicLong delivered = new AtomicLong();
    private volatile long target;
    private volatile Thread waiter;

    @Setup(Level.Trial)
    public void setUp() {
        Executor delivery;
        switch (executor) {
            case "direct":
                delivery = Runnable::run;
                break;
            case "single":
                pool = Executors.newSingleThreadExecutor(daemon("bench-delivery"));
                delivery = pool;
                break;
            default:
                throw new IllegalArgumentException("executor must be direct or single, was " + executor);
        }
        engine = new EventEngine(daemon("bench-event-loop"), delivery);
        eventFds = new int[fds];
        registrations = new Registration[fds];
        perFd = new long[fds];
        for (int i = 0; i < fds; i++) {
            perFd[i] = BATCH / fds + (i < BATCH % fds ? 1 : 0);
            int fd = LibC.eventfd(0, Layout.EFD_NONBLOCK | EFD_SEMAPHORE | Layout.EFD_CLOEXEC);
            if (fd < 0) {
                throw new IllegalStateException("eventfd failed: " + Mem.strerror(Mem.errno()));
            }
            eventFds[i] = fd;
            registrations[i] = engine.register(new CountingSource(fd), this::onEvent,
                EventEngine.DEFAULT_MAX_IN_FLIGHT);
        }
        writeBuffer = new Memory(8);
        delivered.set(0);
        target = 0;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        long read = 0;
        long errors = 0;
        for (Registration registration : registrations) {
            if (registration != null) {
                registration.close();
                read += registration.eventsRead();
                errors += registration.errors();
            }
        }
        engine.close();
        if (pool != null) {
            pool.shutdownNow();
        }
        for (int fd : eventFds) {
            LibC.close(fd);
        }
        writeBuffer.close();
        if (errors != 0 || read != delivered.get() || read != target) {
            throw new IllegalStateException("events written " + target + ", read " + read + ", delivered "
                + delivered.get() + ", errors " + errors);
        }
    }

    private void onEvent(Integer event) {
        if (delivered.addAndGet(event) >= target) {
            LockSupport.unpark(waiter);
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long dispatch() {
        long goal = target + BATCH;
        waiter = Thread.currentThread();
        target = goal;
        long buffer = Mem.address(writeBuffer);
        for (int i = 0; i < eventFds.length; i++) {
            Mem.putLong(buffer, perFd[i]);
            if (LibC.write(eventFds[i], buffer, 8) != 8) {
                throw new IllegalStateException("write(eventfd) failed: " + Mem.strerror(Mem.errno()));
            }
        }
        while (delivered.get() < goal) {
            LockSupport.parkNanos(this, PARK_NANOS);
            for (Registration registration : registrations) {
                if (registration.failure() != null) {
                    throw new IllegalStateException(registration.name() + " failed", registration.failure());
                }
            }
        }
        return goal;
    }

    private static ThreadFactory daemon(String name) {
        return runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    /** One semaphore eventfd: each successful 8-byte read is one event. */
    static final class CountingSource implements EventSource<Integer> {
        private final int fd;
        private final Memory buffer = new Memory(8);
        private final long address = Mem.address(buffer);

        CountingSource(int fd) {
            this.fd = fd;
        }

        @Override
        public int fd() {
            return fd;
        }

        @Override
        public Integer next() {
            long n = LibC.read(fd, address, 8);
            if (n == 8) {
                return EVENT;
            }
            int errno = Mem.errno();
            if (n < 0 && errno == Layout.EAGAIN) {
                return null;
            }
            throw new IllegalStateException("read(eventfd " + fd + ") returned " + n + ", errno " + errno);
        }

        @Override
        public void close() {
            buffer.close();
        }

        @Override
        public String name() {
            return "bench-eventfd[" + fd + "]";
        }
    }
}
