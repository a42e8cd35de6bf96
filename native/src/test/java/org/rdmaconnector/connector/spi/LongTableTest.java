package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LongTableTest {
    @Test
    void itAgreesWithAMapOverManyPostsAndCompletions() {
        LongTable<String> table = new LongTable<>(4);
        Map<Long, String> expected = new HashMap<>();
        Random random = new Random(14);
        long next = 1;
        for (int step = 0; step < 200_000; step++) {
            if (expected.isEmpty() || expected.size() < 300 && random.nextInt(3) > 0) {
                long wrId = random.nextInt(10) == 0 ? random.nextLong() : next++; // mostly consecutive, as posted
                if (!expected.containsKey(wrId)) {
                    table.put(wrId, "r" + wrId);
                    expected.put(wrId, "r" + wrId);
                }
            } else {
                long wrId = random.nextInt(5) == 0 ? random.nextLong()
                    : expected.keySet().stream().skip(random.nextInt(expected.size())).findFirst().orElseThrow();
                assertEquals(expected.get(wrId), table.get(wrId));
                assertEquals(expected.remove(wrId), table.remove(wrId), "remove " + wrId);
            }
            assertEquals(expected.size(), table.size());
        }
        long[] ids = table.ids();
        Arrays.sort(ids);
        assertArrayEquals(expected.keySet().stream().mapToLong(Long::longValue).sorted().toArray(), ids);
        for (long wrId : ids) {
            assertEquals(expected.get(wrId), table.get(wrId));
        }
    }

    @Test
    void anIdIsPostedOnceAndAMissingOneIsNull() {
        LongTable<String> table = new LongTable<>(2);
        table.put(7, "a");
        assertThrows(IllegalStateException.class, () -> table.put(7, "b"));
        assertThrows(IllegalArgumentException.class, () -> table.put(8, null));
        assertNull(table.remove(8));
        assertEquals("a", table.remove(7));
        assertNull(table.get(7));
        assertEquals(0, table.size());
    }

    @Test
    void clearEmptiesItAndItFillsAgain() {
        LongTable<String> table = new LongTable<>(4);
        for (long key = 100; key < 140; key++) {
            table.put(key, "v" + key);
        }
        table.clear();
        assertEquals(0, table.size());
        assertEquals(0, table.ids().length);
        assertNull(table.get(120));
        table.put(120, "again");
        assertEquals("again", table.get(120));
        assertEquals(1, table.size());
    }
}
