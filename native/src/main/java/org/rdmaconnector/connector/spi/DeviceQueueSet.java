package org.rdmaconnector.connector.spi;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.rdmaconnector.verbs.CompletionChannel;
import org.rdmaconnector.verbs.CompletionQueue;
import org.rdmaconnector.verbs.DeviceContext;
import org.rdmaconnector.verbs.ProtectionDomain;
import org.rdmaconnector.verbs.WorkCompletion;
import org.rdmaconnector.verbs.engine.EventEngine;
import org.rdmaconnector.verbs.engine.Registration;
import org.rdmaconnector.verbs.engine.Sources;

/**
 * The per-device queue set of a channel set or of a listener on one device: a lease on the shared device context, a
 * protection domain, a completion channel, one completion queue on it, and the engine's registration that reads it.
 * Each queue pair on the CQ is routed to its own handler by its qp number. Built all or nothing; {@link #close()}
 * frees it in the reverse order (the registration before the CQ, the CQ before its channel, the PD, the lease).
 */
final class DeviceQueueSet implements AutoCloseable {
    private final DeviceRegistry.Lease lease;
    private final ProtectionDomain pd;
    private final CompletionChannel channel;
    private final CompletionQueue cq;
    private final int cqDepth;
    private final Registration completions;
    private final Map<Integer, Consumer<WorkCompletion>> byQp = new ConcurrentHashMap<>();
    private final AutoCloseableStack opened;

    private DeviceQueueSet(DeviceRegistry.Lease lease, DeviceLimits.Demand demand, EventEngine engine,
                           int maxInFlight, AutoCloseableStack opened) {
        this.opened = opened;
        this.lease = opened.push(lease);
        DeviceContext context = lease.context();
        SettingProblem.throwIfAny("RDMA settings do not fit device " + lease.deviceName(), DeviceLimits.problems(
            lease.deviceName(), context.query(), context.completionVectorCount(), demand));
        this.cqDepth = Math.toIntExact(demand.cqDepth());
        this.pd = opened.push(context.allocateProtectionDomain());
        this.channel = opened.push(context.createCompletionChannel());
        this.cq = opened.push(context.createCompletionQueue(cqDepth, channel, demand.completionVector()));
        this.completions = opened.push(engine.register(Sources.completions(channel), this::dispatch, maxInFlight));
    }

    /**
     * Opens a set on {@code lease}'s device whose completion queue has {@code cqDepth} entries; its depth and vector
     * are checked against the device, named only as "a completion queue" (callers that know the settings behind them
     * pass a {@link DeviceLimits.Demand} instead).
     *
     * @param cqDepth entries of the completion queue: callers size it so that their queue pairs cannot overrun it
     */
    static DeviceQueueSet open(DeviceRegistry.Lease lease, int cqDepth, int completionVector, EventEngine engine,
                               int maxInFlight) {
        return open(lease, DeviceLimits.Demand.completionQueue(cqDepth, completionVector), engine, maxInFlight);
    }

    /**
     * Opens a set on {@code lease}'s device after checking {@code demand} against what the device allows; on failure
     * everything opened so far, the lease included, is closed.
     *
     * @throws IllegalArgumentException naming each setting the device does not allow, its value and the limit
     */
    static DeviceQueueSet open(DeviceRegistry.Lease lease, DeviceLimits.Demand demand, EventEngine engine,
                               int maxInFlight) {
        AutoCloseableStack opened = new AutoCloseableStack();
        try {
            return new DeviceQueueSet(lease, demand, engine, maxInFlight, opened);
        } catch (RuntimeException | Error e) {
            opened.closeAll(e);
            throw e;
        }
    }

    DeviceRegistry.Lease lease() {
        return lease;
    }

    String deviceName() {
        return lease.deviceName();
    }

    DeviceContext context() {
        return lease.context();
    }

    ProtectionDomain protectionDomain() {
        return pd;
    }

    CompletionChannel completionChannel() {
        return channel;
    }

    CompletionQueue completionQueue() {
        return cq;
    }

    int cqDepth() {
        return cqDepth;
    }

    /** Sends the completions of queue pair {@code qpNumber} to {@code handler} (on a delivery thread). */
    void route(int qpNumber, Consumer<WorkCompletion> handler) {
        byQp.put(qpNumber, handler);
    }

    /** Stops routing {@code qpNumber}'s completions (its queue pair is destroyed; a reused number starts afresh). */
    void unroute(int qpNumber) {
        byQp.remove(qpNumber);
    }

    /** Queue pairs routed now. */
    int routed() {
        return byQp.size();
    }

    private void dispatch(WorkCompletion completion) {
        Consumer<WorkCompletion> handler = byQp.get(completion.qpNumber());
        if (handler != null) {
            handler.accept(completion);
        }
    }

    /** Frees the registration, CQ, channel, PD and the lease, newest first; the first failure is thrown. */
    @Override
    public void close() {
        byQp.clear();
        opened.closeAll(null);
    }
}
