package org.rdmaconnector.it.felix.probe;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.rdmaconnector.connector.CmEventListener;
import org.rdmaconnector.connector.CompletionListener;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;

/**
 * A whiteboard listener of both kinds, as a user writes one: it notes every CM event and completion in its journal
 * and sends every message it receives back on the same connection.
 */
final class Echo implements CmEventListener, CompletionListener {
    private final List<String> journal = new ArrayList<>();

    @Override
    public void onCmEvent(ConnectionEvent event) {
        note("cm " + event.type());
    }

    @Override
    public void onCompletion(MessageCompletion completion) {
        if (!completion.isSuccess()) {
            note((completion.isReceive() ? "rx " : "tx ") + completion.sequence() + " failed: "
                + completion.workCompletion().statusText());
        } else if (completion.isReceive()) {
            byte[] data = completion.data();
            note("rx " + completion.sequence() + " " + new String(data, StandardCharsets.US_ASCII).split(" ", 3)[1]);
            completion.connection().send(data);
        } else {
            note("tx " + completion.sequence());
        }
    }

    private synchronized void note(String entry) {
        journal.add(entry);
    }

    /** What it has seen so far, in delivery order. */
    synchronized List<String> journal() {
        return List.copyOf(journal);
    }
}
