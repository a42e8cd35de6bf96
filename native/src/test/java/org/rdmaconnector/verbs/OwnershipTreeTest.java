package org.rdmaconnector.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.RdmaException;

/**
 * The ownership tree every verbs/CM object is a node of, driven with test nodes (no device on the host): the order
 * in which children close, closing twice, guards on closed objects, a failing destroy, calls in progress.
 */
@Timeout(10)
class OwnershipTreeTest {
    private final List<String> destroyed = new CopyOnWriteArrayList<>();

    private final class Node extends NativeResource {
        final String name;
        final AtomicInteger destroys = new AtomicInteger();
        volatile RuntimeException failWith;

        Node(String name, Node... parents) {
            this.name = name;
            for (Node parent : parents) {
                parent.acquire();
                try {
                    dependOn(parent);
                } finally {
                    parent.release();
                }
            }
        }

        void call() {
            acquire();
            release();
        }

        @Override
        protected void destroy() {
            if (failWith != null) {
                throw failWith;
            }
            destroys.incrementAndGet();
            destroyed.add(name);
        }
    }

    @Test
    void parentClosesItsDependentsNewestFirstThenItself() {
        Node context = new Node("context");
        Node channel = new Node("channel", context);
        Node cq = new Node("cq", context);
        Node pd = new Node("pd", context);
        Node mr = new Node("mr", pd);
        Node qp = new Node("qp", pd, cq);
        context.close();
        assertEquals(List.of("qp", "mr", "pd", "cq", "channel", "context"), destroyed);
        for (Node node : List.of(context, channel, cq, pd, mr, qp)) {
            assertTrue(node.isClosed(), node.name);
            assertEquals(1, node.destroys.get(), node.name + " destroyed exactly once");
        }
    }

    @Test
    void aDependentOfTwoParentsClosesWithTheFirstAndLeavesTheOther() {
        Node pd = new Node("pd");
        Node cq = new Node("cq");
        Node qp = new Node("qp", pd, cq);
        cq.close();
        assertEquals(List.of("qp", "cq"), destroyed);
        assertEquals(0, pd.dependentCount(), "the closed qp left its other parent");
        pd.close();
        assertEquals(List.of("qp", "cq", "pd"), destroyed);
        assertEquals(1, qp.destroys.get());
    }

    @Test
    void closingTwiceIsANoOpAndAClosedObjectRefusesCalls() {
        Node parent = new Node("parent");
        Node child = new Node("child", parent);
        child.close();
        child.close();
        assertEquals(1, child.destroys.get());
        assertEquals(0, parent.dependentCount());
        IllegalStateException e = assertThrows(IllegalStateException.class, child::call);
        assertEquals("Node is closed", e.getMessage());
        parent.close();
        parent.close();
        assertEquals(List.of("child", "parent"), destroyed);
        assertThrows(IllegalStateException.class, () -> new Node("late", parent), "no child of a closed parent");
    }

    @Test
    void aFailingDestroyLeavesTheObjectOpenAndUsable() {
        Node channel = new Node("channel");
        channel.failWith = RdmaErrors.of("ibv_destroy_comp_channel", 16);
        RdmaException e = assertThrows(RdmaException.class, channel::close);
        assertEquals("EBUSY", e.errnoName());
        assertFalse(channel.isClosed());
        channel.call();
        channel.failWith = null;
        channel.close();
        assertTrue(channel.isClosed());
    }

    /** A thread inside a call on {@code node} until {@code finish} counts down; returns once it is in. */
    private static Thread callInProgress(Node node, CountDownLatch finish) throws InterruptedException {
        CountDownLatch inCall = new CountDownLatch(1);
        Thread caller = new Thread(() -> {
            node.acquire();
            try {
                inCall.countDown();
                finish.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                node.release();
            }
        });
        caller.start();
        assertTrue(inCall.await(5, TimeUnit.SECONDS));
        return caller;
    }

    /** Waits up to 5 s for {@code thread} to wait (a close waiting for a call in progress), naming {@code what}. */
    private static void awaitWaiting(Thread thread, String what) throws InterruptedException {
        TestProbes.await(what, Duration.ofSeconds(5), () -> thread.getState() == Thread.State.WAITING);
    }

    @Test
    void closeWaitsForACallInProgress() throws Exception {
        Node node = new Node("node");
        CountDownLatch finishCall = new CountDownLatch(1);
        Thread caller = callInProgress(node, finishCall);
        Thread closer = new Thread(node::close);
        closer.start();
        awaitWaiting(closer, "close must wait while a native call is in progress");
        assertTrue(destroyed.isEmpty());
        assertThrows(IllegalStateException.class, node::call, "no new call once closing has begun");
        finishCall.countDown();
        closer.join(5000);
        caller.join(5000);
        assertEquals(List.of("node"), destroyed);
    }

    @Test
    void tryAcquireEntersAnOpenObjectAndNeverWaitsForNorPassesAClose() throws Exception {
        // what CmId.toString reads native memory under: never after close, never while a close waits, never blocking
        Node node = new Node("node");
        assertTrue(node.tryAcquire());
        node.release();
        CountDownLatch finishCall = new CountDownLatch(1);
        Thread caller = callInProgress(node, finishCall);
        Thread closer = new Thread(node::close);
        closer.start();
        awaitWaiting(closer, "close waits for the call in progress");
        assertFalse(node.isClosed());
        assertFalse(node.tryAcquire(), "not entered while a close waits (the object is about to be freed)");
        finishCall.countDown();
        closer.join(5000);
        caller.join(5000);
        assertTrue(node.isClosed());
        assertFalse(node.tryAcquire(), "not entered once closed");
    }
}
