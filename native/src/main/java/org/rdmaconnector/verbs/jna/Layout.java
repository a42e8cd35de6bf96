package org.rdmaconnector.verbs.jna;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Sizes, field offsets and constants of the C structures and enums the bindings touch, for x86_64 Linux with the
 * rdma-core headers of Debian 12; {@code struct epoll_event}, the one whose layout differs between the 64-bit
 * architectures, is laid out per architecture ({@link EpollEvent}). Each value is declared with its C name ({@code "ibv_wc.byte_len"},
 * {@code "sizeof.ibv_wc"}, {@code "const.IBV_WC_RECV"}); {@code LayoutTest} compiles {@code src/test/c/layout.c}
 * against the installed headers and fails on any difference, because a wrong offset crashes the JVM.
 * {@code ibv_context_ops.*} are offsets from the start of {@code struct ibv_context}.
 */
public final class Layout {
    private static final Map<String, Long> DECLARED = new LinkedHashMap<>();

    /** The architecture this JVM runs on, as {@code os.arch} names it ({@code amd64}, {@code aarch64}, ...). */
    public static final String ARCH = System.getProperty("os.arch", "");

    /**
     * The layout of {@code struct epoll_event} (u32 events, u64 data) on one architecture. linux/eventpoll.h packs it
     * ({@code EPOLL_PACKED}) on x86-64 only, to match 32-bit x86: 12 bytes, data at 4. On the other 64-bit
     * architectures the u64 is 8-aligned: 16 bytes, data at 8 (a 12-byte stride there makes epoll_wait write past
     * the buffer).
     *
     * @param size sizeof(struct epoll_event)
     * @param events offset of events
     * @param data offset of data
     */
    public record EpollEvent(int size, int events, int data) {
        /** x86-64: packed. */
        public static final EpollEvent PACKED = new EpollEvent(12, 0, 4);
        /** The other 64-bit architectures: natural alignment. */
        public static final EpollEvent NATURAL = new EpollEvent(16, 0, 8);
        /** Every architecture laid out, by its {@code os.arch} name. */
        public static final Map<String, EpollEvent> BY_ARCH = Map.of("amd64", PACKED, "x86_64", PACKED,
            "aarch64", NATURAL, "ppc64le", NATURAL, "s390x", NATURAL, "riscv64", NATURAL);
        /** Their names, for messages. */
        public static final String ARCHITECTURES = String.join(", ", new java.util.TreeSet<>(BY_ARCH.keySet()));
    }

    /** The layout of {@code struct epoll_event} on {@code arch} ({@code os.arch}), or null where it is not laid out. */
    public static EpollEvent epollEventOf(String arch) {
        return EpollEvent.BY_ARCH.get(arch);
    }

    // this JVM's: what layout.c prints on the build host; -1 where not laid out (the event engine refuses to start)
    private static final EpollEvent HOST_EPOLL_EVENT = epollEventOf(ARCH);

    public static final int SIZEOF_IBV_CONTEXT = def("sizeof.ibv_context", 328);
    public static final int IBV_CONTEXT_DEVICE = def("ibv_context.device", 0);
    public static final int IBV_CONTEXT_CMD_FD = def("ibv_context.cmd_fd", 264);
    public static final int IBV_CONTEXT_ASYNC_FD = def("ibv_context.async_fd", 268);
    public static final int IBV_CONTEXT_NUM_COMP_VECTORS = def("ibv_context.num_comp_vectors", 272);
    public static final int OPS_POLL_CQ = def("ibv_context_ops.poll_cq", 96);
    public static final int OPS_REQ_NOTIFY_CQ = def("ibv_context_ops.req_notify_cq", 104);
    public static final int OPS_POST_SEND = def("ibv_context_ops.post_send", 208);
    public static final int OPS_POST_RECV = def("ibv_context_ops.post_recv", 216);
    public static final int SIZEOF_IBV_DEVICE_ATTR = def("sizeof.ibv_device_attr", 232);
    public static final int IBV_DEVICE_ATTR_FW_VER = def("ibv_device_attr.fw_ver", 0);
    public static final int IBV_DEVICE_ATTR_NODE_GUID = def("ibv_device_attr.node_guid", 64);
    public static final int IBV_DEVICE_ATTR_MAX_MR_SIZE = def("ibv_device_attr.max_mr_size", 80);
    public static final int IBV_DEVICE_ATTR_VENDOR_ID = def("ibv_device_attr.vendor_id", 96);
    public static final int IBV_DEVICE_ATTR_VENDOR_PART_ID = def("ibv_device_attr.vendor_part_id", 100);
    public static final int IBV_DEVICE_ATTR_HW_VER = def("ibv_device_attr.hw_ver", 104);
    public static final int IBV_DEVICE_ATTR_MAX_QP = def("ibv_device_attr.max_qp", 108);
    public static final int IBV_DEVICE_ATTR_MAX_QP_WR = def("ibv_device_attr.max_qp_wr", 112);
    public static final int IBV_DEVICE_ATTR_MAX_SGE = def("ibv_device_attr.max_sge", 120);
    public static final int IBV_DEVICE_ATTR_MAX_CQ = def("ibv_device_attr.max_cq", 128);
    public static final int IBV_DEVICE_ATTR_MAX_CQE = def("ibv_device_attr.max_cqe", 132);
    public static final int IBV_DEVICE_ATTR_MAX_MR = def("ibv_device_attr.max_mr", 136);
    public static final int IBV_DEVICE_ATTR_MAX_PD = def("ibv_device_attr.max_pd", 140);
    public static final int IBV_DEVICE_ATTR_PHYS_PORT_CNT = def("ibv_device_attr.phys_port_cnt", 227);
    public static final int SIZEOF_IBV_PORT_ATTR = def("sizeof.ibv_port_attr", 52);
    public static final int IBV_PORT_ATTR_STATE = def("ibv_port_attr.state", 0);
    public static final int IBV_PORT_ATTR_MAX_MTU = def("ibv_port_attr.max_mtu", 4);
    public static final int IBV_PORT_ATTR_ACTIVE_MTU = def("ibv_port_attr.active_mtu", 8);
    public static final int IBV_PORT_ATTR_GID_TBL_LEN = def("ibv_port_attr.gid_tbl_len", 12);
    public static final int IBV_PORT_ATTR_MAX_MSG_SZ = def("ibv_port_attr.max_msg_sz", 20);
    public static final int IBV_PORT_ATTR_LID = def("ibv_port_attr.lid", 34);
    public static final int IBV_PORT_ATTR_LINK_LAYER = def("ibv_port_attr.link_layer", 46);
    public static final int SIZEOF_IBV_GID_ENTRY = def("sizeof.ibv_gid_entry", 32);
    public static final int IBV_GID_ENTRY_GID = def("ibv_gid_entry.gid", 0);
    public static final int IBV_GID_ENTRY_PORT_NUM = def("ibv_gid_entry.port_num", 20);
    public static final int SIZEOF_IBV_PD = def("sizeof.ibv_pd", 16);
    public static final int IBV_PD_CONTEXT = def("ibv_pd.context", 0);
    public static final int SIZEOF_IBV_MR = def("sizeof.ibv_mr", 48);
    public static final int IBV_MR_ADDR = def("ibv_mr.addr", 16);
    public static final int IBV_MR_LENGTH = def("ibv_mr.length", 24);
    public static final int IBV_MR_LKEY = def("ibv_mr.lkey", 36);
    public static final int IBV_MR_RKEY = def("ibv_mr.rkey", 40);
    public static final int SIZEOF_IBV_COMP_CHANNEL = def("sizeof.ibv_comp_channel", 16);
    public static final int IBV_COMP_CHANNEL_CONTEXT = def("ibv_comp_channel.context", 0);
    public static final int IBV_COMP_CHANNEL_FD = def("ibv_comp_channel.fd", 8);
    public static final int SIZEOF_IBV_CQ = def("sizeof.ibv_cq", 128);
    public static final int IBV_CQ_CONTEXT = def("ibv_cq.context", 0);
    public static final int IBV_CQ_CHANNEL = def("ibv_cq.channel", 8);
    public static final int IBV_CQ_CQE = def("ibv_cq.cqe", 28);
    public static final int SIZEOF_IBV_WC = def("sizeof.ibv_wc", 48);
    public static final int IBV_WC_WR_ID = def("ibv_wc.wr_id", 0);
    public static final int IBV_WC_STATUS = def("ibv_wc.status", 8);
    public static final int IBV_WC_OPCODE = def("ibv_wc.opcode", 12);
    public static final int IBV_WC_VENDOR_ERR = def("ibv_wc.vendor_err", 16);
    public static final int IBV_WC_BYTE_LEN = def("ibv_wc.byte_len", 20);
    public static final int IBV_WC_IMM_DATA = def("ibv_wc.imm_data", 24);
    public static final int IBV_WC_QP_NUM = def("ibv_wc.qp_num", 28);
    public static final int IBV_WC_SRC_QP = def("ibv_wc.src_qp", 32);
    public static final int IBV_WC_WC_FLAGS = def("ibv_wc.wc_flags", 36);
    public static final int SIZEOF_IBV_SGE = def("sizeof.ibv_sge", 16);
    public static final int IBV_SGE_ADDR = def("ibv_sge.addr", 0);
    public static final int IBV_SGE_LENGTH = def("ibv_sge.length", 8);
    public static final int IBV_SGE_LKEY = def("ibv_sge.lkey", 12);
    public static final int SIZEOF_IBV_SEND_WR = def("sizeof.ibv_send_wr", 128);
    public static final int IBV_SEND_WR_WR_ID = def("ibv_send_wr.wr_id", 0);
    public static final int IBV_SEND_WR_NEXT = def("ibv_send_wr.next", 8);
    public static final int IBV_SEND_WR_SG_LIST = def("ibv_send_wr.sg_list", 16);
    public static final int IBV_SEND_WR_NUM_SGE = def("ibv_send_wr.num_sge", 24);
    public static final int IBV_SEND_WR_OPCODE = def("ibv_send_wr.opcode", 28);
    public static final int IBV_SEND_WR_SEND_FLAGS = def("ibv_send_wr.send_flags", 32);
    public static final int IBV_SEND_WR_IMM_DATA = def("ibv_send_wr.imm_data", 36);
    public static final int IBV_SEND_WR_WR_RDMA_REMOTE_ADDR = def("ibv_send_wr.wr.rdma.remote_addr", 40);
    public static final int IBV_SEND_WR_WR_RDMA_RKEY = def("ibv_send_wr.wr.rdma.rkey", 48);
    public static final int SIZEOF_IBV_RECV_WR = def("sizeof.ibv_recv_wr", 32);
    public static final int IBV_RECV_WR_WR_ID = def("ibv_recv_wr.wr_id", 0);
    public static final int IBV_RECV_WR_NEXT = def("ibv_recv_wr.next", 8);
    public static final int IBV_RECV_WR_SG_LIST = def("ibv_recv_wr.sg_list", 16);
    public static final int IBV_RECV_WR_NUM_SGE = def("ibv_recv_wr.num_sge", 24);
    public static final int SIZEOF_IBV_QP = def("sizeof.ibv_qp", 160);
    public static final int IBV_QP_CONTEXT = def("ibv_qp.context", 0);
    public static final int IBV_QP_QP_NUM = def("ibv_qp.qp_num", 52);
    public static final int SIZEOF_IBV_QP_INIT_ATTR = def("sizeof.ibv_qp_init_attr", 64);
    public static final int IBV_QP_INIT_ATTR_QP_CONTEXT = def("ibv_qp_init_attr.qp_context", 0);
    public static final int IBV_QP_INIT_ATTR_SEND_CQ = def("ibv_qp_init_attr.send_cq", 8);
    public static final int IBV_QP_INIT_ATTR_RECV_CQ = def("ibv_qp_init_attr.recv_cq", 16);
    public static final int IBV_QP_INIT_ATTR_SRQ = def("ibv_qp_init_attr.srq", 24);
    public static final int IBV_QP_INIT_ATTR_CAP_MAX_SEND_WR = def("ibv_qp_init_attr.cap.max_send_wr", 32);
    public static final int IBV_QP_INIT_ATTR_CAP_MAX_RECV_WR = def("ibv_qp_init_attr.cap.max_recv_wr", 36);
    public static final int IBV_QP_INIT_ATTR_CAP_MAX_SEND_SGE = def("ibv_qp_init_attr.cap.max_send_sge", 40);
    public static final int IBV_QP_INIT_ATTR_CAP_MAX_RECV_SGE = def("ibv_qp_init_attr.cap.max_recv_sge", 44);
    public static final int IBV_QP_INIT_ATTR_CAP_MAX_INLINE_DATA = def("ibv_qp_init_attr.cap.max_inline_data", 48);
    public static final int IBV_QP_INIT_ATTR_QP_TYPE = def("ibv_qp_init_attr.qp_type", 52);
    public static final int IBV_QP_INIT_ATTR_SQ_SIG_ALL = def("ibv_qp_init_attr.sq_sig_all", 56);
    public static final int SIZEOF_IBV_QP_ATTR = def("sizeof.ibv_qp_attr", 144);
    public static final int IBV_QP_ATTR_QP_STATE = def("ibv_qp_attr.qp_state", 0);
    public static final int IBV_QP_ATTR_MIN_RNR_TIMER = def("ibv_qp_attr.min_rnr_timer", 128);
    public static final int IBV_QP_ATTR_TIMEOUT = def("ibv_qp_attr.timeout", 130);
    public static final int IBV_QP_ATTR_RETRY_CNT = def("ibv_qp_attr.retry_cnt", 131);
    public static final int IBV_QP_ATTR_RNR_RETRY = def("ibv_qp_attr.rnr_retry", 132);
    public static final int SIZEOF_IBV_ASYNC_EVENT = def("sizeof.ibv_async_event", 16);
    public static final int IBV_ASYNC_EVENT_ELEMENT = def("ibv_async_event.element", 0);
    public static final int IBV_ASYNC_EVENT_EVENT_TYPE = def("ibv_async_event.event_type", 8);
    public static final int SIZEOF_RDMA_EVENT_CHANNEL = def("sizeof.rdma_event_channel", 4);
    public static final int RDMA_EVENT_CHANNEL_FD = def("rdma_event_channel.fd", 0);
    public static final int SIZEOF_RDMA_CM_ID = def("sizeof.rdma_cm_id", 416);
    public static final int RDMA_CM_ID_VERBS = def("rdma_cm_id.verbs", 0);
    public static final int RDMA_CM_ID_CHANNEL = def("rdma_cm_id.channel", 8);
    public static final int RDMA_CM_ID_CONTEXT = def("rdma_cm_id.context", 16);
    public static final int RDMA_CM_ID_QP = def("rdma_cm_id.qp", 24);
    public static final int RDMA_CM_ID_ROUTE_ADDR_SRC_ADDR = def("rdma_cm_id.route.addr.src_addr", 32);
    public static final int RDMA_CM_ID_ROUTE_ADDR_DST_ADDR = def("rdma_cm_id.route.addr.dst_addr", 160);
    public static final int RDMA_CM_ID_PS = def("rdma_cm_id.ps", 344);
    public static final int RDMA_CM_ID_PORT_NUM = def("rdma_cm_id.port_num", 348);
    public static final int SIZEOF_RDMA_CONN_PARAM = def("sizeof.rdma_conn_param", 24);
    public static final int RDMA_CONN_PARAM_PRIVATE_DATA = def("rdma_conn_param.private_data", 0);
    public static final int RDMA_CONN_PARAM_PRIVATE_DATA_LEN = def("rdma_conn_param.private_data_len", 8);
    public static final int RDMA_CONN_PARAM_RESPONDER_RESOURCES = def("rdma_conn_param.responder_resources", 9);
    public static final int RDMA_CONN_PARAM_INITIATOR_DEPTH = def("rdma_conn_param.initiator_depth", 10);
    public static final int RDMA_CONN_PARAM_FLOW_CONTROL = def("rdma_conn_param.flow_control", 11);
    public static final int RDMA_CONN_PARAM_RETRY_COUNT = def("rdma_conn_param.retry_count", 12);
    public static final int RDMA_CONN_PARAM_RNR_RETRY_COUNT = def("rdma_conn_param.rnr_retry_count", 13);
    public static final int RDMA_CONN_PARAM_SRQ = def("rdma_conn_param.srq", 14);
    public static final int RDMA_CONN_PARAM_QP_NUM = def("rdma_conn_param.qp_num", 16);
    public static final int SIZEOF_RDMA_CM_EVENT = def("sizeof.rdma_cm_event", 80);
    public static final int RDMA_CM_EVENT_ID = def("rdma_cm_event.id", 0);
    public static final int RDMA_CM_EVENT_LISTEN_ID = def("rdma_cm_event.listen_id", 8);
    public static final int RDMA_CM_EVENT_EVENT = def("rdma_cm_event.event", 16);
    public static final int RDMA_CM_EVENT_STATUS = def("rdma_cm_event.status", 20);
    public static final int RDMA_CM_EVENT_PARAM = def("rdma_cm_event.param", 24);
    public static final int SIZEOF_SOCKADDR_IN = def("sizeof.sockaddr_in", 16);
    public static final int SOCKADDR_IN_SIN_FAMILY = def("sockaddr_in.sin_family", 0);
    public static final int SOCKADDR_IN_SIN_PORT = def("sockaddr_in.sin_port", 2);
    public static final int SOCKADDR_IN_SIN_ADDR = def("sockaddr_in.sin_addr", 4);
    public static final int SIZEOF_SOCKADDR_IN6 = def("sizeof.sockaddr_in6", 28);
    public static final int SOCKADDR_IN6_SIN6_FAMILY = def("sockaddr_in6.sin6_family", 0);
    public static final int SOCKADDR_IN6_SIN6_PORT = def("sockaddr_in6.sin6_port", 2);
    public static final int SOCKADDR_IN6_SIN6_FLOWINFO = def("sockaddr_in6.sin6_flowinfo", 4);
    public static final int SOCKADDR_IN6_SIN6_ADDR = def("sockaddr_in6.sin6_addr", 8);
    public static final int SOCKADDR_IN6_SIN6_SCOPE_ID = def("sockaddr_in6.sin6_scope_id", 24);
    public static final int SIZEOF_SOCKADDR_STORAGE = def("sizeof.sockaddr_storage", 128);
    public static final int SIZEOF_EPOLL_EVENT = def("sizeof.epoll_event",
        HOST_EPOLL_EVENT == null ? -1 : HOST_EPOLL_EVENT.size());
    public static final int EPOLL_EVENT_EVENTS = def("epoll_event.events",
        HOST_EPOLL_EVENT == null ? -1 : HOST_EPOLL_EVENT.events());
    public static final int EPOLL_EVENT_DATA = def("epoll_event.data",
        HOST_EPOLL_EVENT == null ? -1 : HOST_EPOLL_EVENT.data());
    public static final int SIZEOF_POLLFD = def("sizeof.pollfd", 8);
    public static final int POLLFD_FD = def("pollfd.fd", 0);
    public static final int POLLFD_EVENTS = def("pollfd.events", 4);
    public static final int POLLFD_REVENTS = def("pollfd.revents", 6);
    public static final int AF_INET = def("const.AF_INET", 2);
    public static final int AF_INET6 = def("const.AF_INET6", 10);
    public static final int RDMA_PS_TCP = def("const.RDMA_PS_TCP", 262);
    public static final int RDMA_PS_UDP = def("const.RDMA_PS_UDP", 273);
    public static final int RDMA_OPTION_ID = def("const.RDMA_OPTION_ID", 0);
    public static final int RDMA_OPTION_ID_ACK_TIMEOUT = def("const.RDMA_OPTION_ID_ACK_TIMEOUT", 3);
    public static final int IBV_QPT_RC = def("const.IBV_QPT_RC", 2);
    public static final int IBV_QPT_UD = def("const.IBV_QPT_UD", 4);
    public static final int IBV_QP_STATE = def("const.IBV_QP_STATE", 1);
    public static final int IBV_QP_TIMEOUT = def("const.IBV_QP_TIMEOUT", 512);
    public static final int IBV_QP_RETRY_CNT = def("const.IBV_QP_RETRY_CNT", 1024);
    public static final int IBV_QP_RNR_RETRY = def("const.IBV_QP_RNR_RETRY", 2048);
    public static final int IBV_QP_MIN_RNR_TIMER = def("const.IBV_QP_MIN_RNR_TIMER", 32768);
    public static final int IBV_QPS_RESET = def("const.IBV_QPS_RESET", 0);
    public static final int IBV_QPS_INIT = def("const.IBV_QPS_INIT", 1);
    public static final int IBV_QPS_RTR = def("const.IBV_QPS_RTR", 2);
    public static final int IBV_QPS_RTS = def("const.IBV_QPS_RTS", 3);
    public static final int IBV_QPS_SQD = def("const.IBV_QPS_SQD", 4);
    public static final int IBV_QPS_SQE = def("const.IBV_QPS_SQE", 5);
    public static final int IBV_QPS_ERR = def("const.IBV_QPS_ERR", 6);
    public static final int IBV_ACCESS_LOCAL_WRITE = def("const.IBV_ACCESS_LOCAL_WRITE", 1);
    public static final int IBV_ACCESS_REMOTE_WRITE = def("const.IBV_ACCESS_REMOTE_WRITE", 2);
    public static final int IBV_ACCESS_REMOTE_READ = def("const.IBV_ACCESS_REMOTE_READ", 4);
    public static final int IBV_WR_RDMA_WRITE = def("const.IBV_WR_RDMA_WRITE", 0);
    public static final int IBV_WR_RDMA_WRITE_WITH_IMM = def("const.IBV_WR_RDMA_WRITE_WITH_IMM", 1);
    public static final int IBV_WR_SEND = def("const.IBV_WR_SEND", 2);
    public static final int IBV_WR_SEND_WITH_IMM = def("const.IBV_WR_SEND_WITH_IMM", 3);
    public static final int IBV_WR_RDMA_READ = def("const.IBV_WR_RDMA_READ", 4);
    public static final int IBV_SEND_SIGNALED = def("const.IBV_SEND_SIGNALED", 2);
    public static final int IBV_SEND_SOLICITED = def("const.IBV_SEND_SOLICITED", 4);
    public static final int IBV_SEND_INLINE = def("const.IBV_SEND_INLINE", 8);
    public static final int IBV_WC_SUCCESS = def("const.IBV_WC_SUCCESS", 0);
    public static final int IBV_WC_WR_FLUSH_ERR = def("const.IBV_WC_WR_FLUSH_ERR", 5);
    public static final int IBV_WC_REM_ACCESS_ERR = def("const.IBV_WC_REM_ACCESS_ERR", 10);
    public static final int IBV_WC_RETRY_EXC_ERR = def("const.IBV_WC_RETRY_EXC_ERR", 12);
    public static final int IBV_WC_SEND = def("const.IBV_WC_SEND", 0);
    public static final int IBV_WC_RDMA_WRITE = def("const.IBV_WC_RDMA_WRITE", 1);
    public static final int IBV_WC_RDMA_READ = def("const.IBV_WC_RDMA_READ", 2);
    public static final int IBV_WC_RECV = def("const.IBV_WC_RECV", 128);
    public static final int IBV_WC_RECV_RDMA_WITH_IMM = def("const.IBV_WC_RECV_RDMA_WITH_IMM", 129);
    public static final int IBV_WC_WITH_IMM = def("const.IBV_WC_WITH_IMM", 2);
    public static final int IBV_PORT_ACTIVE = def("const.IBV_PORT_ACTIVE", 4);
    public static final int IBV_LINK_LAYER_INFINIBAND = def("const.IBV_LINK_LAYER_INFINIBAND", 1);
    public static final int IBV_LINK_LAYER_ETHERNET = def("const.IBV_LINK_LAYER_ETHERNET", 2);
    public static final int IBV_EVENT_CQ_ERR = def("const.IBV_EVENT_CQ_ERR", 0);
    public static final int IBV_EVENT_QP_FATAL = def("const.IBV_EVENT_QP_FATAL", 1);
    public static final int IBV_EVENT_QP_REQ_ERR = def("const.IBV_EVENT_QP_REQ_ERR", 2);
    public static final int IBV_EVENT_QP_ACCESS_ERR = def("const.IBV_EVENT_QP_ACCESS_ERR", 3);
    public static final int IBV_EVENT_COMM_EST = def("const.IBV_EVENT_COMM_EST", 4);
    public static final int IBV_EVENT_SQ_DRAINED = def("const.IBV_EVENT_SQ_DRAINED", 5);
    public static final int IBV_EVENT_PATH_MIG = def("const.IBV_EVENT_PATH_MIG", 6);
    public static final int IBV_EVENT_PATH_MIG_ERR = def("const.IBV_EVENT_PATH_MIG_ERR", 7);
    public static final int IBV_EVENT_DEVICE_FATAL = def("const.IBV_EVENT_DEVICE_FATAL", 8);
    public static final int IBV_EVENT_PORT_ACTIVE = def("const.IBV_EVENT_PORT_ACTIVE", 9);
    public static final int IBV_EVENT_PORT_ERR = def("const.IBV_EVENT_PORT_ERR", 10);
    public static final int IBV_EVENT_LID_CHANGE = def("const.IBV_EVENT_LID_CHANGE", 11);
    public static final int IBV_EVENT_PKEY_CHANGE = def("const.IBV_EVENT_PKEY_CHANGE", 12);
    public static final int IBV_EVENT_SM_CHANGE = def("const.IBV_EVENT_SM_CHANGE", 13);
    public static final int IBV_EVENT_SRQ_ERR = def("const.IBV_EVENT_SRQ_ERR", 14);
    public static final int IBV_EVENT_SRQ_LIMIT_REACHED = def("const.IBV_EVENT_SRQ_LIMIT_REACHED", 15);
    public static final int IBV_EVENT_QP_LAST_WQE_REACHED = def("const.IBV_EVENT_QP_LAST_WQE_REACHED", 16);
    public static final int IBV_EVENT_CLIENT_REREGISTER = def("const.IBV_EVENT_CLIENT_REREGISTER", 17);
    public static final int IBV_EVENT_GID_CHANGE = def("const.IBV_EVENT_GID_CHANGE", 18);
    public static final int IBV_EVENT_WQ_FATAL = def("const.IBV_EVENT_WQ_FATAL", 19);
    public static final int RDMA_CM_EVENT_ADDR_RESOLVED = def("const.RDMA_CM_EVENT_ADDR_RESOLVED", 0);
    public static final int RDMA_CM_EVENT_TIMEWAIT_EXIT = def("const.RDMA_CM_EVENT_TIMEWAIT_EXIT", 15);
    public static final int F_GETFL = def("const.F_GETFL", 3);
    public static final int F_SETFL = def("const.F_SETFL", 4);
    public static final int O_NONBLOCK = def("const.O_NONBLOCK", 2048);
    public static final int O_CLOEXEC = def("const.O_CLOEXEC", 524288);
    public static final int EFD_NONBLOCK = def("const.EFD_NONBLOCK", 2048);
    public static final int EFD_CLOEXEC = def("const.EFD_CLOEXEC", 524288);
    public static final int EPOLL_CLOEXEC = def("const.EPOLL_CLOEXEC", 524288);
    public static final int EPOLL_CTL_ADD = def("const.EPOLL_CTL_ADD", 1);
    public static final int EPOLL_CTL_DEL = def("const.EPOLL_CTL_DEL", 2);
    public static final int EPOLL_CTL_MOD = def("const.EPOLL_CTL_MOD", 3);
    public static final int EPOLLIN = def("const.EPOLLIN", 1);
    public static final int EPOLLERR = def("const.EPOLLERR", 8);
    public static final int EPOLLHUP = def("const.EPOLLHUP", 16);
    public static final long EPOLLET = def("const.EPOLLET", 2147483648L);
    public static final int EPOLLONESHOT = def("const.EPOLLONESHOT", 1073741824);
    public static final int POLLIN = def("const.POLLIN", 1);
    public static final int SIZEOF_RLIMIT = def("sizeof.rlimit", 16);
    public static final int RLIMIT_RLIM_CUR = def("rlimit.rlim_cur", 0);
    public static final int RLIMIT_RLIM_MAX = def("rlimit.rlim_max", 8);
    public static final int RLIMIT_MEMLOCK = def("const.RLIMIT_MEMLOCK", 8);
    // rlim_t is unsigned; read as a Java long, RLIM_INFINITY is -1
    public static final long RLIM_INFINITY = def("const.RLIM_INFINITY", -1L);

    // errno values (errno.h)
    public static final int EPERM = def("const.EPERM", 1);
    public static final int ENOENT = def("const.ENOENT", 2);
    public static final int EINTR = def("const.EINTR", 4);
    public static final int EIO = def("const.EIO", 5);
    public static final int EBADF = def("const.EBADF", 9);
    public static final int EAGAIN = def("const.EAGAIN", 11);
    public static final int ENOMEM = def("const.ENOMEM", 12);
    public static final int EACCES = def("const.EACCES", 13);
    public static final int EFAULT = def("const.EFAULT", 14);
    public static final int EBUSY = def("const.EBUSY", 16);
    public static final int EEXIST = def("const.EEXIST", 17);
    public static final int ENODEV = def("const.ENODEV", 19);
    public static final int EINVAL = def("const.EINVAL", 22);
    public static final int EMFILE = def("const.EMFILE", 24);
    public static final int ENOSPC = def("const.ENOSPC", 28);
    public static final int ENOSYS = def("const.ENOSYS", 38);
    public static final int EPROTONOSUPPORT = def("const.EPROTONOSUPPORT", 93);
    public static final int EOPNOTSUPP = def("const.EOPNOTSUPP", 95);
    public static final int EADDRINUSE = def("const.EADDRINUSE", 98);
    public static final int EADDRNOTAVAIL = def("const.EADDRNOTAVAIL", 99);
    public static final int ENETUNREACH = def("const.ENETUNREACH", 101);
    public static final int ECONNRESET = def("const.ECONNRESET", 104);
    public static final int ENOBUFS = def("const.ENOBUFS", 105);
    public static final int EISCONN = def("const.EISCONN", 106);
    public static final int ENOTCONN = def("const.ENOTCONN", 107);
    public static final int ETIMEDOUT = def("const.ETIMEDOUT", 110);
    public static final int ECONNREFUSED = def("const.ECONNREFUSED", 111);
    public static final int EHOSTUNREACH = def("const.EHOSTUNREACH", 113);
    public static final int EALREADY = def("const.EALREADY", 114);
    public static final int EINPROGRESS = def("const.EINPROGRESS", 115);

    private Layout() {
    }

    private static int def(String key, int value) {
        DECLARED.put(key, (long) value);
        return value;
    }

    private static long def(String key, long value) {
        DECLARED.put(key, value);
        return value;
    }

    /** Every value declared here, by its C key, for the layout test. */
    public static Map<String, Long> declared() {
        return Collections.unmodifiableMap(DECLARED);
    }
}
