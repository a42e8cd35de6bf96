package org.rdmaconnector.verbs.jna;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Native;
import org.junit.jupiter.api.Test;

/**
 * The bindings' registration with JNA, as a resource adapter's start and stop use it: the last release unbinds
 * them (a call fails with UnsatisfiedLinkError, no crash) and the next retain binds them again.
 */
class BindingsTest {
    private static void eventfdWorks() {
        int fd = LibC.eventfd(0, Layout.EFD_CLOEXEC);
        assertTrue(fd >= 0, "eventfd returned " + fd);
        assertEquals(0, LibC.close(fd));
    }

    @Test
    void theLastReleaseUnbindsAndTheNextRetainBindsAgain() {
        Bindings.retain();
        Bindings.retain();
        try {
            eventfdWorks();
            Bindings.release(); // one user left: still bound
            eventfdWorks();
        } finally {
            Bindings.release();
        }
        try {
            assertTrue(!Native.registered(LibC.class), "unregistered from JNA after the last release");
            assertThrows(UnsatisfiedLinkError.class, () -> LibC.eventfd(0, Layout.EFD_CLOEXEC));
        } finally {
            Bindings.retain();
        }
        try {
            assertTrue(Native.registered(LibC.class));
            eventfdWorks();
        } finally {
            Bindings.release();
            Bindings.retain(); // leave them bound (one user) for the other tests of this JVM
        }
    }
}
