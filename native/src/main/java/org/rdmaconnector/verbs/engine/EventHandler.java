package org.rdmaconnector.verbs.engine;

/**
 * Receives the events of one registration, on a thread of the delivery executor. An exception is logged and counted
 * and the next event is delivered as usual.
 *
 * @param <E> the event type
 */
@FunctionalInterface
public interface EventHandler<E> {
    /** Handles one event. */
    void onEvent(E event) throws Exception;
}
