package org.rdmaconnector.it.app;

import jakarta.ejb.ConcurrencyManagement;
import jakarta.ejb.ConcurrencyManagementType;
import jakarta.ejb.Singleton;
import java.util.ArrayList;
import java.util.List;

/** What the MDBs saw, in delivery order. */
@Singleton
@ConcurrencyManagement(ConcurrencyManagementType.BEAN)
public class Recorder {
    private final List<String> cmEvents = new ArrayList<>();
    private final List<String> received = new ArrayList<>();
    private final List<Long> receiveSequences = new ArrayList<>();
    private int sendCompletions;

    public synchronized void cmEvent(String type) {
        cmEvents.add(type);
    }

    public synchronized void received(long sequence, String message) {
        receiveSequences.add(sequence);
        received.add(message);
    }

    public synchronized void sent() {
        sendCompletions++;
    }

    public synchronized List<String> cmEvents() {
        return new ArrayList<>(cmEvents);
    }

    public synchronized List<String> received() {
        return new ArrayList<>(received);
    }

    public synchronized List<Long> receiveSequences() {
        return new ArrayList<>(receiveSequences);
    }

    public synchronized int sendCompletions() {
        return sendCompletions;
    }

    public synchronized void clear() {
        cmEvents.clear();
        received.clear();
        receiveSequences.clear();
        sendCompletions = 0;
    }
}
