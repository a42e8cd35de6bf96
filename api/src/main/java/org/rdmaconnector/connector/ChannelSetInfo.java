package org.rdmaconnector.connector;

/**
 * What an application may see of the pooled channel set behind its {@link RdmaConnection}: figures, never the
 * channels themselves (the connector reads them, and the next borrower needs them intact).
 *
 * @param state the set's state: {@code OPEN}, {@code DEVICE_REMOVED} (its device went away; it is not lent again)
 *     or {@code CLOSED}
 * @param eventChannelFd the fd of its RDMA CM event channel
 * @param completionChannelFd the fd of its completion channel
 * @param completionQueueCapacity the entries of its completion queue (ibv_create_cq's cqe, as the device gave it)
 * @param cmEventsRead CM events the connector has read from its event channel, since the set was opened
 * @param completionsRead work completions the connector has polled from its completion queue, since then (each is
 *     counted just after it is handed on, so the count may trail a request's {@code await} by a moment)
 * @param completionEvents completion events (ibv_get_cq_event: wake-ups) the connector has taken from its
 *     completion channel, since then; under load busy polling makes them far fewer than the completions
 * @param registeredBytes bytes registered through it now (counted against the configured limit)
 */
public record ChannelSetInfo(String state, int eventChannelFd, int completionChannelFd, int completionQueueCapacity,
                             long cmEventsRead, long completionsRead, long completionEvents,
                             long registeredBytes) {
}
