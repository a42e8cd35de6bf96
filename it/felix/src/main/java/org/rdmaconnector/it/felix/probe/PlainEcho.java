package org.rdmaconnector.it.felix.probe;

import java.util.concurrent.atomic.AtomicLong;
import org.rdmaconnector.connector.CmEventListener;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.CompletionListener;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;

/**
 * A whiteboard listener of both kinds for the layered benchmark (issue 14, layer c): it sends every message back on
 * its connection and only counts, so that what is measured is the path through the framework, not the listener.
 */
final class PlainEcho implements CmEventListener, CompletionListener {
    private final AtomicLong echoed = new AtomicLong();
    private final AtomicLong disconnected = new AtomicLong();

    @Override
    public void onCmEvent(ConnectionEvent event) {
        if (event.type() == CmEventType.DISCONNECTED) {
            disconnected.incrementAndGet();
        }
    }

    @Override
    public void onCompletion(MessageCompletion completion) {
        if (completion.isReceive() && completion.isSuccess()) {
            completion.connection().send(completion.data());
            echoed.incrementAndGet();
        }
    }

    /** Messages echoed and connections disconnected so far. */
    long[] served() {
        return new long[] {echoed.get(), disconnected.get()};
    }
}
