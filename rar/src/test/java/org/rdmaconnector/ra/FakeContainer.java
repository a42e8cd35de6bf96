package org.rdmaconnector.ra;

import jakarta.resource.spi.BootstrapContext;
import jakarta.resource.spi.XATerminator;
import jakarta.resource.spi.endpoint.MessageEndpoint;
import jakarta.resource.spi.endpoint.MessageEndpointFactory;
import jakarta.resource.spi.work.ExecutionContext;
import jakarta.resource.spi.work.Work;
import jakarta.resource.spi.work.WorkContext;
import jakarta.resource.spi.work.WorkListener;
import jakarta.resource.spi.work.WorkManager;
import jakarta.resource.spi.work.WorkRejectedException;
import jakarta.transaction.TransactionSynchronizationRegistry;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Timer;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** Test doubles of the container's side of the contracts: bootstrap context, WorkManager, endpoint factories. */
final class FakeContainer implements BootstrapContext, WorkManager {
    final List<Thread> threads = new CopyOnWriteArrayList<>();
    final List<Timer> timers = new CopyOnWriteArrayList<>();
    // scheduleWork refuses while set, as a saturated WorkManager does; scheduled counts its calls
    volatile boolean refusing;
    final AtomicInteger scheduled = new AtomicInteger();
    // the long-running Work started (startWork), so a test can release it as a server does
    final List<Work> started = new CopyOnWriteArrayList<>();
    // set: the timers' cancel() throws it after cancelling, as a failing server part during stop would
    volatile RuntimeException timerCancelFailure;
    // set: startWork releases the Work right after starting it, as a server shutting its WorkManager down may
    volatile boolean releaseAtOnce;

    @Override
    public WorkManager getWorkManager() {
        return this;
    }

    @Override
    public XATerminator getXATerminator() {
        return null;
    }

    @Override
    public Timer createTimer() {
        Timer timer = new Timer("fake-container-timer", true) {
            @Override
            public void cancel() {
                super.cancel();
                RuntimeException failure = timerCancelFailure;
                if (failure != null) {
                    throw failure;
                }
            }
        };
        timers.add(timer);
        return timer;
    }

    @Override
    public boolean isContextSupported(Class<? extends WorkContext> type) {
        return false;
    }

    @Override
    public TransactionSynchronizationRegistry getTransactionSynchronizationRegistry() {
        return null;
    }

    /** Whether every thread the WorkManager started has ended. */
    boolean allThreadsEnded() {
        return threads.stream().noneMatch(Thread::isAlive);
    }

    private Thread run(Work work) {
        Thread thread = new Thread(work, "fake-work-" + threads.size());
        threads.add(thread);
        thread.start();
        return thread;
    }

    @Override
    public void doWork(Work work) {
        work.run();
    }

    @Override
    public void doWork(Work work, long timeout, ExecutionContext context, WorkListener listener) {
        work.run();
    }

    @Override
    public long startWork(Work work) {
        started.add(work);
        run(work);
        if (releaseAtOnce) {
            work.release();
        } // the thread is started before this returns, as startWork promises
        return 0;
    }

    @Override
    public long startWork(Work work, long timeout, ExecutionContext context, WorkListener listener) {
        return startWork(work);
    }

    @Override
    public void scheduleWork(Work work) throws WorkRejectedException {
        scheduled.incrementAndGet();
        if (refusing) {
            throw new WorkRejectedException("the fake WorkManager is saturated");
        }
        run(work);
    }

    @Override
    public void scheduleWork(Work work, long timeout, ExecutionContext context, WorkListener listener)
        throws WorkRejectedException {
        scheduleWork(work);
    }

    /** What an endpoint factory saw. */
    static final class Endpoints {
        final AtomicInteger created = new AtomicInteger();
        final AtomicInteger released = new AtomicInteger();
        final AtomicInteger transactedAsked = new AtomicInteger();
        volatile boolean releaseFails; // release counts, then throws
        final List<String> calls = new CopyOnWriteArrayList<>();
    }

    /**
     * An endpoint factory of {@code listenerType} whose endpoints record their calls; {@code transacted} answers
     * isDeliveryTransacted; {@code onCall} runs inside each listener call.
     */
    static MessageEndpointFactory factory(Class<?> listenerType, boolean transacted, Endpoints seen,
                                          java.util.function.Consumer<Object[]> onCall) {
        return new MessageEndpointFactory() {
            @Override
            public MessageEndpoint createEndpoint(javax.transaction.xa.XAResource xa) {
                seen.created.incrementAndGet();
                return (MessageEndpoint) Proxy.newProxyInstance(FakeContainer.class.getClassLoader(),
                    new Class<?>[] {MessageEndpoint.class, listenerType}, (proxy, method, args) -> {
                        switch (method.getName()) {
                            case "release" -> {
                                seen.released.incrementAndGet();
                                if (seen.releaseFails) {
                                    throw new IllegalStateException("the container failed to release it");
                                }
                            }
                            case "beforeDelivery", "afterDelivery" -> seen.calls.add(method.getName());
                            case "toString" -> {
                                return "endpoint";
                            }
                            case "hashCode" -> {
                                return System.identityHashCode(proxy);
                            }
                            case "equals" -> {
                                return proxy == args[0];
                            }
                            default -> {
                                seen.calls.add(method.getName());
                                onCall.accept(args);
                            }
                        }
                        return null;
                    });
            }

            @Override
            public MessageEndpoint createEndpoint(javax.transaction.xa.XAResource xa, long timeout) {
                return createEndpoint(xa);
            }

            @Override
            public boolean isDeliveryTransacted(Method method) {
                seen.transactedAsked.incrementAndGet();
                return transacted;
            }

            @Override
            public String getActivationName() {
                return "test-" + listenerType.getSimpleName();
            }

            @Override
            public Class<?> getEndpointClass() {
                return null;
            }
        };
    }
}
