package org.rdmaconnector.verbs;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import org.rdmaconnector.connector.RemoteAccess;
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

    /**
     * What a region the connector registers gets: LOCAL_WRITE (receives and RDMA reads land in it), and
     * REMOTE_READ, REMOTE_WRITE as {@code remote} says.
     */
    public static Set<Access> withRemote(Set<RemoteAccess> remote) {
        if (remote == null) {
            throw new IllegalArgumentException("remoteAccess must not be null (an empty set for local access only)");
        }
        EnumSet<Access> access = EnumSet.of(LOCAL_WRITE);
        if (remote.contains(RemoteAccess.READ)) {
            access.add(REMOTE_READ);
        }
        if (remote.contains(RemoteAccess.WRITE)) {
            access.add(REMOTE_WRITE);
        }
        return access;
    }

    /** The remote part of {@code access}. */
    static Set<RemoteAccess> remotePart(Set<Access> access) {
        EnumSet<RemoteAccess> remote = EnumSet.noneOf(RemoteAccess.class);
        if (access.contains(REMOTE_READ)) {
            remote.add(RemoteAccess.READ);
        }
        if (access.contains(REMOTE_WRITE)) {
            remote.add(RemoteAccess.WRITE);
        }
        return Collections.unmodifiableSet(remote);
    }

    static int flags(Set<Access> access) {
        int flags = 0;
        for (Access a : access) {
            flags |= a.flag;
        }
        return flags;
    }
}
