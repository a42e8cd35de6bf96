package org.rdmaconnector.connector;

/**
 * What {@code ibv_query_port(3)} reports ({@code struct ibv_port_attr}).
 *
 * @param portNumber the port queried, from 1
 * @param state logical state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE ({@code enum ibv_port_state})
 * @param maxMtu largest MTU, as {@code enum ibv_mtu} (1 = 256 ... 5 = 4096)
 * @param activeMtu active MTU, as {@code enum ibv_mtu}
 * @param gidTableLength entries in the GID table
 * @param maxMessageSize largest message in bytes
 * @param lid base LID (InfiniBand)
 * @param linkLayer 1 InfiniBand, 2 Ethernet (RoCE)
 */
public record PortAttributes(int portNumber, int state, int maxMtu, int activeMtu, int gidTableLength,
                             long maxMessageSize, int lid, int linkLayer) {
    /** {@code IBV_PORT_ACTIVE}. */
    public static final int PORT_ACTIVE = 4;
    /** {@code IBV_LINK_LAYER_ETHERNET}. */
    public static final int LINK_LAYER_ETHERNET = 2;

    /** Whether the port is ACTIVE (usable). */
    public boolean isActive() {
        return state == PORT_ACTIVE;
    }

    /** Whether the link layer is Ethernet (RoCE, including Soft-RoCE). */
    public boolean isEthernet() {
        return linkLayer == LINK_LAYER_ETHERNET;
    }

    /** The active MTU in bytes. */
    public int activeMtuBytes() {
        return 128 << activeMtu;
    }
}
