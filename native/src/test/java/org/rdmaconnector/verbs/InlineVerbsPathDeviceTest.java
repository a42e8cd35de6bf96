package org.rdmaconnector.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.verbs.jna.Mem;
import org.rdmaconnector.verbs.jna.OpsPath;

/**
 * On rxe0, a device context calls the inline verbs, and {@code Mem} reads and writes, on the path chosen for this
 * Java: FFM from Java 22, JNA before, or the path the host asked for in {@code $RDMA_EXPECT_INLINE_VERBS} (the
 * soft-RDMA tier sets it, so a guest JVM that is not the Java it meant fails here). Every other device test then runs
 * on that path.
 */
@Tag("device")
@Timeout(60)
class InlineVerbsPathDeviceTest {
    /** The environment variable naming the {@link OpsPath} the guest JVM must take. */
    static final String EXPECTED = "RDMA_EXPECT_INLINE_VERBS";

    @Test
    void aDeviceContextCallsTheInlineVerbsOnThePathChosenForThisJava() {
        String asked = System.getenv(EXPECTED);
        OpsPath expected = asked != null ? OpsPath.valueOf(asked)
            : Runtime.version().feature() >= 22 ? OpsPath.FFM : OpsPath.JNA;
        System.err.println("*** " + OpsPath.choiceReason() + " ***");
        try (DeviceContext context = DeviceContext.openVerbsOnly("rxe0");
             CompletionChannel channel = context.createCompletionChannel();
             CompletionQueue cq = context.createCompletionQueue(4, channel, 0);
             WorkCompletions completions = new WorkCompletions(4)) {
            assertEquals(expected, context.ops().path(), OpsPath.choiceReason());
            assertEquals(expected, Mem.accessPath(), "native memory is read and written on the inline verbs' path");
            cq.requestNotify(false); // a system call on rxe
            assertEquals(0, cq.poll(completions));
        }
    }
}
