package org.rdmaconnector.verbs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WorkCompletion;

/** Bad arguments throw IllegalArgumentException naming the argument and its range, before any native call. */
class ArgumentValidationTest {
    private static void rejects(String expectedInMessage, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(expectedInMessage), () -> "'" + e.getMessage() + "' should name '"
            + expectedInMessage + "'");
    }

    @Test
    void deviceNames() {
        rejects("device name", () -> DeviceContext.open(null));
        rejects("device name", () -> DeviceContext.open(""));
        rejects("device name", () -> DeviceContext.openVerbsOnly(null));
        rejects("device name", () -> Rdma.device(""));
    }

    @Test
    void connectionParameters() {
        rejects("privateData must be at most 255", () -> ConnectionParameters.defaults().withPrivateData(new byte[256]));
        rejects("responderResources", () -> new ConnectionParameters(null, -1, 1, 0, 7, 7, 0, 0));
        rejects("initiatorDepth", () -> new ConnectionParameters(null, 1, 256, 0, 7, 7, 0, 0));
        rejects("flowControl", () -> new ConnectionParameters(null, 1, 1, 2, 7, 7, 0, 0));
        rejects("retryCount must be from 0 to 7", () -> new ConnectionParameters(null, 1, 1, 0, 8, 7, 0, 0));
        rejects("rnrRetryCount", () -> new ConnectionParameters(null, 1, 1, 0, 7, -1, 0, 0));
        rejects("srq", () -> new ConnectionParameters(null, 1, 1, 0, 7, 7, 2, 0));
        assertEquals(6, ConnectionParameters.defaults().retryCount(), "7 is 'forever' on Soft-RoCE");
        ConnectionParameters ok = ConnectionParameters.defaults().withPrivateData(new byte[] {1, 2, 3});
        byte[] copy = ok.privateData();
        copy[0] = 9;
        assertArrayEquals(new byte[] {1, 2, 3}, ok.privateData(), "private data is copied in and out");
        assertEquals(ok, ConnectionParameters.defaults().withPrivateData(new byte[] {1, 2, 3}));
        assertEquals(0, new ConnectionParameters(null, 0, 0, 0, 0, 0, 0, 0).privateData().length);
    }

    @Test
    void queuePairCapabilities() {
        rejects("maxSendWr must be at least 1", () -> QueuePairCapabilities.of(0, 1));
        rejects("maxRecvWr", () -> QueuePairCapabilities.of(1, -5));
        rejects("maxSendSge", () -> new QueuePairCapabilities(1, 1, 0, 1, 0));
        rejects("maxRecvSge", () -> new QueuePairCapabilities(1, 1, 1, 0, 0));
        rejects("maxInlineData", () -> new QueuePairCapabilities(1, 1, 1, 1, -1));
        assertEquals(new QueuePairCapabilities(16, 32, 1, 1, 0), QueuePairCapabilities.of(16, 32));
    }

    @Test
    void workCompletionBatches() {
        rejects("capacity must be from 1 to 4096", () -> new WorkCompletions(0));
        rejects("capacity", () -> new WorkCompletions(4097));
        rejects("capacity", () -> new WorkCompletions(Integer.MIN_VALUE));
        try (WorkCompletions batch = new WorkCompletions(4)) {
            assertEquals(4, batch.capacity());
            assertEquals(0, batch.count());
            assertThrows(IndexOutOfBoundsException.class, () -> batch.get(0), "nothing polled yet");
            batch.close();
            batch.close();
            assertThrows(IllegalStateException.class, batch::address, "closed batch");
        }
    }

    @Test
    void timeouts() {
        rejects("timeout must be a non-negative duration", () -> Fds.timeoutMillis(null, "timeout"));
        rejects("timeout must be a non-negative duration", () -> Fds.timeoutMillis(Duration.ofMillis(-1), "timeout"));
        rejects("at most 2147483647 ms", () -> Fds.timeoutMillis(Duration.ofDays(365), "timeout"));
        assertEquals(1500, Fds.timeoutMillis(Duration.ofMillis(1500), "timeout"));
    }

    @Test
    void enumsMatchTheCValues() {
        assertEquals(CmEventType.CONNECT_REQUEST, CmEventType.of(4));
        assertEquals(CmEventType.TIMEWAIT_EXIT, CmEventType.of(15));
        assertEquals(null, CmEventType.of(16));
        assertEquals(null, CmEventType.of(-1));
        assertTrue(CmEventType.REJECTED.isError());
        assertEquals(AsyncEventType.PORT_ERR, AsyncEventType.of(10));
        assertTrue(AsyncEventType.PORT_ERR.isPortEvent() && AsyncEventType.PORT_ERR.isFatal());
        assertEquals(AsyncEventType.UNKNOWN, AsyncEventType.of(99));
        assertEquals(WcOpcode.RECV, WcOpcode.of(128));
        assertEquals(WcOpcode.OTHER, WcOpcode.of(77));
        assertEquals("Work Request Flushed Error", WorkCompletion.statusText(5));
    }

    @Test
    void rdmaExceptionMessages() {
        RdmaException busy = RdmaErrors.of("ibv_destroy_comp_channel", 16, "1 completion queue(s) attached");
        assertEquals("ibv_destroy_comp_channel failed: EBUSY (16): completion queues are still attached to this "
            + "channel; close them first [1 completion queue(s) attached]", busy.getMessage());
        RdmaException generic = RdmaErrors.of("rdma_connect", 110);
        assertEquals("rdma_connect failed: ETIMEDOUT (110): Connection timed out", generic.getMessage());
        assertEquals("errno 4000", RdmaErrors.of("x", 4000).errnoName());
    }
}
