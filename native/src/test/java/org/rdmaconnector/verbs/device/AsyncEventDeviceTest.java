package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.verbs.AsyncEvent;
import org.rdmaconnector.verbs.AsyncEventType;
import org.rdmaconnector.verbs.DeviceContext;

/**
 * Real asynchronous events: taking rxe0's network interface down and up makes the kernel report PORT_ERR and
 * PORT_ACTIVE on port 1. Runs as root in the soft-RDMA VM; the interface is up again when it ends.
 */
@Tag("device")
@Timeout(120)
class AsyncEventDeviceTest {
    private static AsyncEvent next(DeviceContext context) {
        assertTrue(context.awaitAsyncEvent(Loopback.TIMEOUT), "no async event within " + Loopback.TIMEOUT);
        AsyncEvent event = context.getAsyncEvent();
        assertNotNull(event);
        return event;
    }

    @Test
    void portDownAndUpAreReportedAndAcknowledged() throws Exception {
        try (DeviceContext context = DeviceContext.openVerbsOnly("rxe0")) {
            context.setAsyncNonBlocking(true);
            assertNull(context.getAsyncEvent(), "nothing pending at the start");
            try {
                Ip.run("link", "set", "dummy0", "down");
                AsyncEvent down = next(context);
                assertEquals(AsyncEventType.PORT_ERR, down.type(), down.toString());
                assertEquals(1, down.portNumber());
                assertEquals("rxe0", down.device());
                assertTrue(down.type().isFatal());
            } finally {
                Ip.run("link", "set", "dummy0", "up");
            }
            AsyncEvent up = next(context);
            assertEquals(AsyncEventType.PORT_ACTIVE, up.type(), up.toString());
            assertEquals(1, up.portNumber());
            long deadline = System.nanoTime() + Loopback.TIMEOUT.toNanos();
            while (!context.queryPort(1).isActive() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertTrue(context.queryPort(1).isActive(), "port 1 is active again for the other tests");
        }
    }
}
