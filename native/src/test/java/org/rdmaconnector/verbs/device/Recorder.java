package org.rdmaconnector.verbs.device;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.spi.EndpointSink;
import org.rdmaconnector.connector.spi.KeptCompletion;

/** Records what a listener delivers; optionally answers each received message. */
final class Recorder implements EndpointSink {
    final List<ConnectionEvent> events = new CopyOnWriteArrayList<>();
    final List<MessageCompletion> completions = new CopyOnWriteArrayList<>();
    final Consumer<MessageCompletion> onReceive;
    volatile Consumer<ConnectionEvent> onEvent;

    Recorder(Consumer<MessageCompletion> onReceive) {
        this.onReceive = onReceive;
    }

    /** A recorder that sends every message it receives back on its connection. */
    static Recorder echo() {
        return new Recorder(c -> {
            if (c.isSuccess()) {
                c.connection().send(c.data());
            }
        });
    }

    List<CmEventType> types() {
        return events.stream().map(ConnectionEvent::type).toList();
    }

    List<MessageCompletion> receives() {
        return completions.stream().filter(MessageCompletion::isReceive).toList();
    }

    List<MessageCompletion> sends() {
        return completions.stream().filter(c -> !c.isReceive()).toList();
    }

    @Override
    public String name() {
        return "recorder";
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
        Consumer<ConnectionEvent> handler = onEvent;
        if (handler != null) {
            handler.accept(event);
        }
        events.add(event);
    }

    @Override
    public void deliver(MessageCompletion completion) {
        if (onReceive != null && completion.isReceive()) {
            onReceive.accept(completion);
        }
        completions.add(KeptCompletion.of(completion)); // taken during its delivery (once: a throw is retried)
    }
}
