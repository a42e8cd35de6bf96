package org.rdmaconnector.verbs.engine;

/**
 * An order key ({@link EventSource#orderKey}) that holds its own delivery queue. A source whose keys are few and live
 * long (a queue pair's route on a completion channel) returns the same instance for a key as long as the key lives:
 * the engine keeps the key's queue in it and makes nothing per event. A plain key's queue is made when an event finds
 * the key idle, and leaves the engine's map when it empties, so that idle keys cost nothing. An instance serves one
 * registration (another registration handles it as a plain key).
 */
public class OrderKey {
    // the engine's delivery queue of this key: made once, by the first registration whose reader meets the key
    volatile Object queue;
}
