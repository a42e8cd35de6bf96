package org.rdmaconnector.verbs.device;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import org.rdmaconnector.verbs.TestProbes;

/**
 * Requests from a guest of {@code rdma-vm run2} to the host that runs it (it/vm/README.md): a request is a file in the
 * guest's share, and the host answers with {@code REQUEST.done} once it has acted.
 */
final class VmHost {
    private static final Duration ANSWER = Duration.ofSeconds(60);

    private VmHost() {
    }

    /** The host kills the other guest's qemu (no shutdown: the peer says nothing more on the wire). */
    static void killPeer() throws IOException, InterruptedException {
        ask("kill-peer");
    }

    /**
     * The host takes this guest's cable out ({@code false}) or puts it back ({@code true}): qemu's {@code set_link}
     * on its NIC, so {@code eth0} loses or regains its carrier and stays administratively up.
     */
    static void cable(boolean plugged) throws IOException, InterruptedException {
        ask(plugged ? "link-up" : "link-down");
    }

    private static void ask(String request) throws IOException, InterruptedException {
        Path share = Path.of(System.getenv("RDMA_VM_SHARE"));
        Path done = share.resolve(request + ".done");
        Files.deleteIfExists(done);
        // made under another name and renamed: the host removes the request as soon as it sees it, and 9p's create
        // looks the new name up again after creating it (the lookup would fail)
        Path pending = Files.createFile(share.resolve(request + ".pending"));
        Files.move(pending, share.resolve(request), StandardCopyOption.ATOMIC_MOVE);
        TestProbes.await("the host's answer to " + request, ANSWER, () -> Files.exists(done));
        Files.delete(done);
    }
}
