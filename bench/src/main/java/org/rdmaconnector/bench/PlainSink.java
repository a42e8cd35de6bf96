package org.rdmaconnector.bench;

import java.util.function.Consumer;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.spi.EndpointSink;

/**
 * A plain-Java listener behind the hub (no JCA endpoint, no OSGi service): it takes CM events and completions and
 * hands them to two functions, on the hub's delivery threads.
 */
final class PlainSink implements EndpointSink {
    private final String name;
    private final Consumer<ConnectionEvent> events;
    private final Consumer<MessageCompletion> completions;

    PlainSink(String name, Consumer<ConnectionEvent> events, Consumer<MessageCompletion> completions) {
        this.name = name;
        this.events = events;
        this.completions = completions;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean receivesCmEvents() {
        return true;
    }

    @Override
    public boolean receivesCompletions() {
        return true;
    }

    @Override
    public void deliver(ConnectionEvent event) {
        events.accept(event);
    }

    @Override
    public void deliver(MessageCompletion completion) {
        completions.accept(completion);
    }
}
