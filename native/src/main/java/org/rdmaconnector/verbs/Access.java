package org.rdmaconnector.verbs;

import java.util.Set;
import org.rdmaconnector.verbs.jna.Layout;

/** Memory region access flags ({@code enum ibv_access_flags}, ibv_reg_mr(3)). */
public enum Access {
    /** The local HCA may write (needed for receives and RDMA reads into the region). */
    LOCAL_WRITE(Layout.IBV_ACCESS_LOCAL_WRITE),
    /** Peers may RDMA-write into the region (requires LOCAL_WRITE). */
    REMOTE_WRITE(Layout.IBV_ACCESS_REMOTE_WRITE),
    /** Peers may RDMA-read the region. */
    REMOTE_READ(Layout.IBV_ACCESS_REMOTE_READ);

    private final int flag;

    Access(int flag) {
        this.flag = flag;
    }

    static int flags(Set<Access> access) {
        int flags = 0;
        for (Access a : access) {
            flags |= a.flag;
        }
        return flags;
    }
}
