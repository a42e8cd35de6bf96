package org.rdmaconnector.verbs;

import org.rdmaconnector.verbs.jna.Layout;

/** The port space of a CM id ({@code enum rdma_port_space}, rdma_create_id(3)). */
public enum PortSpace {
    /** Reliable connected queue pairs (RC), like TCP. */
    TCP(Layout.RDMA_PS_TCP),
    /** Unreliable datagram queue pairs (UD), like UDP. */
    UDP(Layout.RDMA_PS_UDP);

    private final int value;

    PortSpace(int value) {
        this.value = value;
    }

    int value() {
        return value;
    }
}
