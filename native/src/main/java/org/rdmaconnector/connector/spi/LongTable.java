package org.rdmaconnector.connector.spi;

import java.util.Arrays;

/**
 * Values by a {@code long} key, in an open-addressing table, so that a lookup boxes no key and an entry makes no map
 * node: a connection's posted requests by work request id (a connection posts two requests per echoed message), a
 * queue set's routes by qp number (a lookup per completion). Linear probing; a removal shifts the entries after it
 * back, so the table keeps no tombstones. It grows, and never shrinks: it holds at most what was in it at once.
 * Thread-safe (one lock; every call is short).
 *
 * @param <V> what is kept per key
 */
final class LongTable<V> {
    private long[] keys;
    private Object[] values;
    private int size;

    /** A table for about {@code expected} entries at once. */
    LongTable(int expected) {
        int capacity = Integer.highestOneBit(Math.max(4, expected) * 2 - 1) << 1; // a power of two, load <= 1/2
        keys = new long[capacity];
        values = new Object[capacity];
    }

    /** Adds {@code value} for {@code key}, which must not be there. */
    synchronized void put(long key, V value) {
        if (value == null) {
            throw new IllegalArgumentException("value must not be null");
        }
        if (2 * (size + 1) > keys.length) {
            grow();
        }
        int i = slot(key);
        while (values[i] != null) {
            if (keys[i] == key) {
                throw new IllegalStateException("key " + key + " is in the table already");
            }
            i = (i + 1) & (keys.length - 1);
        }
        keys[i] = key;
        values[i] = value;
        size++;
    }

    /** The value of {@code key}, or null. */
    @SuppressWarnings("unchecked")
    synchronized V get(long key) {
        int i = find(key);
        return i < 0 ? null : (V) values[i];
    }

    /** Removes and returns the value of {@code key}, or null when it is not there. */
    @SuppressWarnings("unchecked")
    synchronized V remove(long key) {
        int i = find(key);
        if (i < 0) {
            return null;
        }
        V value = (V) values[i];
        int mask = keys.length - 1;
        // shift back the entries of the run after i whose home is not between the gap and them
        int gap = i;
        for (int j = (i + 1) & mask; values[j] != null; j = (j + 1) & mask) {
            int home = slot(keys[j]);
            if (((j - home) & mask) >= ((j - gap) & mask)) {
                keys[gap] = keys[j];
                values[gap] = values[j];
                gap = j;
            }
        }
        values[gap] = null;
        size--;
        return value;
    }

    /** Removes every entry. */
    synchronized void clear() {
        Arrays.fill(values, null);
        size = 0;
    }

    /** Entries in the table. */
    synchronized int size() {
        return size;
    }

    /** The keys in the table now, in no order. */
    synchronized long[] ids() {
        long[] ids = new long[size];
        int n = 0;
        for (int i = 0; i < keys.length; i++) {
            if (values[i] != null) {
                ids[n++] = keys[i];
            }
        }
        return ids;
    }

    private int find(long key) {
        int i = slot(key);
        while (values[i] != null) {
            if (keys[i] == key) {
                return i;
            }
            i = (i + 1) & (keys.length - 1);
        }
        return -1;
    }

    private int slot(long key) {
        long h = key * 0x9E3779B97F4A7C15L; // ids and qp numbers are consecutive: spread them
        return (int) (h >>> 32) & (keys.length - 1);
    }

    private void grow() {
        long[] oldKeys = keys;
        Object[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new Object[oldValues.length * 2];
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldValues[i] != null) {
                int j = slot(oldKeys[i]);
                while (values[j] != null) {
                    j = (j + 1) & (keys.length - 1);
                }
                keys[j] = oldKeys[i];
                values[j] = oldValues[i];
            }
        }
    }

    @Override
    public synchronized String toString() {
        long[] ids = ids();
        Arrays.sort(ids);
        return "LongTable" + Arrays.toString(ids);
    }
}
