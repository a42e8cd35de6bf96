package org.rdmaconnector.connector.spi;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.Completion;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.verbs.PolledCompletion;
import org.rdmaconnector.verbs.RdmaErrors;
import org.rdmaconnector.verbs.TestProbes;
import org.rdmaconnector.verbs.jna.Layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A work request ends once: with its work completion, or failed (its device removed), which its waiter is told. */
@Timeout(30)
class PostedRequestTest {
    private static PolledCompletion completion(long wrId, int status) {
        return PolledCompletion.of(new WorkCompletion(wrId, status, WcOpcode.RECV, 0, 0, 0, 7, 0, 0));
    }

    private static final RdmaException REMOVED = RdmaErrors.explained("ibv_post_recv", Layout.ENODEV,
        "device removed: rxe1");

    @Test
    void aCoveredRequestIsDoneAndItsResultIsItsOwnMadeFromTheSharedOne() throws Exception {
        PolledCompletion shared = PolledCompletion.of(new WorkCompletion(0, Layout.IBV_WC_SUCCESS, WcOpcode.SEND, 0, 0,
            0, 7, 0, 0));
        PostedRequest request = new PostedRequest(42, WorkRequest.Kind.SEND);
        assertTrue(request.completeCovered(shared));
        assertFalse(request.completeCovered(shared), "once");
        assertTrue(request.isDone());
        WorkCompletion own = request.result();
        assertEquals(new WorkCompletion(42, Layout.IBV_WC_SUCCESS, WcOpcode.SEND, 0, 0, 0, 7, 0, 0), own,
            "its own wr_id, the rest as the shared one says");
        assertEquals(own, request.await(Duration.ofSeconds(1)), "its waiter is woken with it");
        assertTrue(request.toString().contains("success"), request.toString());
    }

    /** Awaits {@code request} on a thread of its own; returns once that thread is blocked in the wait. */
    private static FutureTask<WorkCompletion> blockedWaiter(PostedRequest request) throws InterruptedException {
        FutureTask<WorkCompletion> waiter = new FutureTask<>(() -> request.await(Duration.ofSeconds(20)));
        Thread thread = new Thread(waiter, "waiter of " + request);
        thread.setDaemon(true);
        thread.start();
        TestProbes.await("the waiter blocked in the wait", Duration.ofSeconds(10),
            () -> thread.getState() == Thread.State.TIMED_WAITING);
        return waiter;
    }

    @Test
    void aWaiterOfAFailedRequestGetsItsError() throws Exception {
        PostedRequest request = new PostedRequest(1, WorkRequest.Kind.RECEIVE);
        FutureTask<WorkCompletion> waiter = blockedWaiter(request);
        assertFalse(request.isDone());
        assertTrue(request.fail(completion(1, Layout.IBV_WC_WR_FLUSH_ERR), REMOVED));
        ExecutionException e = assertThrows(ExecutionException.class, () -> waiter.get(10, TimeUnit.SECONDS));
        assertSame(REMOVED, e.getCause());
        assertSame(REMOVED, request.failure());
        assertTrue(request.isDone());
        assertEquals(Layout.IBV_WC_WR_FLUSH_ERR, request.result().status());
        assertNull(request.data());
        assertTrue(request.toString().contains("device removed: rxe1"), request.toString());
    }

    @Test
    void aRequestEndsOnceWhicheverComesFirst() throws Exception {
        PostedRequest failed = new PostedRequest(2, WorkRequest.Kind.SEND);
        assertTrue(failed.fail(completion(2, Layout.IBV_WC_WR_FLUSH_ERR), REMOVED));
        assertFalse(failed.complete(completion(2, Layout.IBV_WC_SUCCESS), new byte[1]), "a late completion");
        assertSame(REMOVED, assertThrows(RdmaException.class, () -> failed.await(Duration.ofSeconds(1))));
        assertNull(failed.await(Duration.ofMillis(1)), "consumed: a second wait times out");

        PostedRequest completed = new PostedRequest(3, WorkRequest.Kind.SEND);
        assertTrue(completed.complete(completion(3, Layout.IBV_WC_SUCCESS), null));
        assertFalse(completed.fail(completion(3, Layout.IBV_WC_WR_FLUSH_ERR), REMOVED));
        assertNull(completed.failure());
        assertTrue(completed.await(Duration.ofSeconds(1)).isSuccess());
        assertThrows(IllegalArgumentException.class, () -> new PostedRequest(4, WorkRequest.Kind.SEND).fail(
            completion(4, Layout.IBV_WC_WR_FLUSH_ERR), null));
    }

    @Test
    void itsCompletionHasOneEventWhetherAskedForBeforeOrAfterTheRequestCompleted() throws Exception {
        PostedRequest askedAfter = new PostedRequest(5, WorkRequest.Kind.RECEIVE);
        assertTrue(askedAfter.complete(completion(5, Layout.IBV_WC_SUCCESS), new byte[0]));
        assertSame(askedAfter.completion(), askedAfter.completion(), "made once");
        assertTrue(askedAfter.completion().tryWaitForCompletion(), "the event of the completed request");
        assertFalse(askedAfter.completion().tryWaitForCompletion(), "one event only");

        PostedRequest askedBefore = new PostedRequest(6, WorkRequest.Kind.RECEIVE);
        assertFalse(askedBefore.completion().completionDone());
        FutureTask<WorkCompletion> waiter = blockedWaiter(askedBefore);
        assertTrue(askedBefore.complete(completion(6, Layout.IBV_WC_SUCCESS), new byte[0]));
        assertTrue(waiter.get(20, TimeUnit.SECONDS).isSuccess(), "the waiter woke");
        assertFalse(askedBefore.completion().tryWaitForCompletion(), "its one event was consumed");
    }

    @Test
    void anAwaitOfADoneRequestConsumesItsOneEventAsWaitingOnItsCompletionWould() throws Exception {
        PostedRequest done = new PostedRequest(7, WorkRequest.Kind.SEND);
        assertTrue(done.complete(completion(7, Layout.IBV_WC_SUCCESS), null));
        assertEquals(7, done.await(Duration.ofSeconds(20)).wrId(), "the result, at once");
        assertNull(done.await(Duration.ofMillis(1)), "its one event was consumed: a second await times out");
        assertFalse(done.completion().tryWaitForCompletion(), "a completion made afterwards has no event");
        assertTrue(done.isDone());

        PostedRequest asked = new PostedRequest(9, WorkRequest.Kind.SEND);
        assertTrue(asked.complete(completion(9, Layout.IBV_WC_SUCCESS), null));
        Completion c = asked.completion(); // asked for before the await: the await consumes its event
        assertEquals(9, asked.await(Duration.ofSeconds(20)).wrId());
        assertFalse(c.tryWaitForCompletion(), "the await took the completion's one event");
    }

    @Test
    void itsResultIsMadeFromThePolledFieldsWhenAskedAndNeverOutlivesARepost() {
        PostedRequest receive = new PostedRequest(1, WorkRequest.Kind.RECEIVE);
        WorkCompletion first = new WorkCompletion(1, 0, WcOpcode.RECV, 0, 5, 0, 7, 0, 0);
        assertTrue(receive.complete(PolledCompletion.of(first), null));
        assertEquals(first, receive.result());
        assertSame(receive.result(), receive.result(), "made once");
        assertTrue(receive.reposted(2));
        assertNull(receive.result(), "in flight again");
        WorkCompletion second = new WorkCompletion(2, 0, WcOpcode.RECV_RDMA_WITH_IMM, 0, 99, 42, 7, 0,
            WorkCompletion.WITH_IMM);
        assertTrue(receive.complete(PolledCompletion.of(second), null));
        assertEquals(second, receive.result(), "the second completion's, not a record kept of the first");

        PostedRequest covered = new PostedRequest(8, WorkRequest.Kind.SEND);
        assertTrue(covered.completeCovered(PolledCompletion.of(new WorkCompletion(0, 0, WcOpcode.SEND, 0, 0, 0, 7, 0,
            0))));
        assertEquals(new WorkCompletion(8, 0, WcOpcode.SEND, 0, 0, 0, 7, 0, 0), covered.result(), "its own wr_id");
    }

    @Test
    void aDoneReceiveNobodyAwaitsIsPostedAgainAsANewRequestAndEndsOnceMore() {
        PostedRequest receive = new PostedRequest(1, WorkRequest.Kind.RECEIVE);
        assertFalse(receive.reposted(2), "not done: still posted as request 1");
        assertTrue(receive.complete(completion(1, Layout.IBV_WC_SUCCESS), new byte[] {1}));
        assertTrue(receive.reposted(2));
        assertEquals(2, receive.wrId());
        assertFalse(receive.isDone());
        assertNull(receive.result());
        assertNull(receive.data(), "nothing of its last message");
        assertTrue(receive.complete(completion(2, Layout.IBV_WC_WR_FLUSH_ERR), null));
        assertFalse(receive.complete(completion(2, Layout.IBV_WC_SUCCESS), null), "once, as request 2");
        assertEquals(Layout.IBV_WC_WR_FLUSH_ERR, receive.result().status());

        PostedRequest awaited = new PostedRequest(3, WorkRequest.Kind.RECEIVE);
        awaited.completion();
        assertTrue(awaited.complete(completion(3, Layout.IBV_WC_SUCCESS), null));
        assertFalse(awaited.reposted(4), "someone may wait on its completion: a new request is needed");
        assertEquals(3, awaited.wrId());
        assertTrue(awaited.isDone());
    }
}
