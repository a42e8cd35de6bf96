/*
 * Prints the size, field offsets and constants that rdma-native's Java side (org.rdmaconnector.verbs.jna.Layout)
 * hard-codes, as read from the installed rdma-core and libc headers. LayoutTest compiles and runs this program and
 * fails on any difference in either direction: a wrong offset here would crash the JVM of an application server.
 * One line per value: "<key> <value>".
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define SIZE(s) printf("sizeof.%s %zu\n", #s, sizeof(struct s))
#define OFF(s, f) printf("%s.%s %zu\n", #s, #f, offsetof(struct s, f))
#define OPS(f) printf("ibv_context_ops.%s %zu\n", #f, offsetof(struct ibv_context, ops) + offsetof(struct ibv_context_ops, f))
#define CONST(c) printf("const.%s %lld\n", #c, (long long) (c))

int main(void)
{
	SIZE(ibv_context);
	OFF(ibv_context, device);
	OFF(ibv_context, cmd_fd);
	OFF(ibv_context, async_fd);
	OFF(ibv_context, num_comp_vectors);
	OPS(poll_cq);
	OPS(req_notify_cq);
	OPS(post_send);
	OPS(post_recv);

	SIZE(ibv_device_attr);
	OFF(ibv_device_attr, fw_ver);
	OFF(ibv_device_attr, node_guid);
	OFF(ibv_device_attr, max_mr_size);
	OFF(ibv_device_attr, vendor_id);
	OFF(ibv_device_attr, vendor_part_id);
	OFF(ibv_device_attr, hw_ver);
	OFF(ibv_device_attr, max_qp);
	OFF(ibv_device_attr, max_qp_wr);
	OFF(ibv_device_attr, max_sge);
	OFF(ibv_device_attr, max_cq);
	OFF(ibv_device_attr, max_cqe);
	OFF(ibv_device_attr, max_mr);
	OFF(ibv_device_attr, max_pd);
	OFF(ibv_device_attr, phys_port_cnt);

	SIZE(ibv_port_attr);
	OFF(ibv_port_attr, state);
	OFF(ibv_port_attr, max_mtu);
	OFF(ibv_port_attr, active_mtu);
	OFF(ibv_port_attr, gid_tbl_len);
	OFF(ibv_port_attr, max_msg_sz);
	OFF(ibv_port_attr, lid);
	OFF(ibv_port_attr, link_layer);

	SIZE(ibv_gid_entry);
	OFF(ibv_gid_entry, gid);
	OFF(ibv_gid_entry, port_num);

	SIZE(ibv_pd);
	OFF(ibv_pd, context);

	SIZE(ibv_mr);
	OFF(ibv_mr, addr);
	OFF(ibv_mr, length);
	OFF(ibv_mr, lkey);
	OFF(ibv_mr, rkey);

	SIZE(ibv_comp_channel);
	OFF(ibv_comp_channel, context);
	OFF(ibv_comp_channel, fd);

	SIZE(ibv_cq);
	OFF(ibv_cq, context);
	OFF(ibv_cq, channel);
	OFF(ibv_cq, cqe);

	SIZE(ibv_wc);
	OFF(ibv_wc, wr_id);
	OFF(ibv_wc, status);
	OFF(ibv_wc, opcode);
	OFF(ibv_wc, vendor_err);
	OFF(ibv_wc, byte_len);
	OFF(ibv_wc, imm_data);
	OFF(ibv_wc, qp_num);
	OFF(ibv_wc, src_qp);
	OFF(ibv_wc, wc_flags);

	SIZE(ibv_sge);
	OFF(ibv_sge, addr);
	OFF(ibv_sge, length);
	OFF(ibv_sge, lkey);

	SIZE(ibv_send_wr);
	OFF(ibv_send_wr, wr_id);
	OFF(ibv_send_wr, next);
	OFF(ibv_send_wr, sg_list);
	OFF(ibv_send_wr, num_sge);
	OFF(ibv_send_wr, opcode);
	OFF(ibv_send_wr, send_flags);
	OFF(ibv_send_wr, imm_data);
	printf("ibv_send_wr.wr.rdma.remote_addr %zu\n", offsetof(struct ibv_send_wr, wr.rdma.remote_addr));
	printf("ibv_send_wr.wr.rdma.rkey %zu\n", offsetof(struct ibv_send_wr, wr.rdma.rkey));

	SIZE(ibv_recv_wr);
	OFF(ibv_recv_wr, wr_id);
	OFF(ibv_recv_wr, next);
	OFF(ibv_recv_wr, sg_list);
	OFF(ibv_recv_wr, num_sge);

	SIZE(ibv_qp);
	OFF(ibv_qp, context);
	OFF(ibv_qp, qp_num);

	SIZE(ibv_qp_init_attr);
	OFF(ibv_qp_init_attr, qp_context);
	OFF(ibv_qp_init_attr, send_cq);
	OFF(ibv_qp_init_attr, recv_cq);
	OFF(ibv_qp_init_attr, srq);
	printf("ibv_qp_init_attr.cap.max_send_wr %zu\n", offsetof(struct ibv_qp_init_attr, cap.max_send_wr));
	printf("ibv_qp_init_attr.cap.max_recv_wr %zu\n", offsetof(struct ibv_qp_init_attr, cap.max_recv_wr));
	printf("ibv_qp_init_attr.cap.max_send_sge %zu\n", offsetof(struct ibv_qp_init_attr, cap.max_send_sge));
	printf("ibv_qp_init_attr.cap.max_recv_sge %zu\n", offsetof(struct ibv_qp_init_attr, cap.max_recv_sge));
	printf("ibv_qp_init_attr.cap.max_inline_data %zu\n", offsetof(struct ibv_qp_init_attr, cap.max_inline_data));
	OFF(ibv_qp_init_attr, qp_type);
	OFF(ibv_qp_init_attr, sq_sig_all);

	SIZE(ibv_qp_attr);
	OFF(ibv_qp_attr, qp_state);
	OFF(ibv_qp_attr, min_rnr_timer);
	OFF(ibv_qp_attr, timeout);
	OFF(ibv_qp_attr, retry_cnt);
	OFF(ibv_qp_attr, rnr_retry);

	SIZE(ibv_async_event);
	OFF(ibv_async_event, element);
	OFF(ibv_async_event, event_type);

	SIZE(rdma_event_channel);
	OFF(rdma_event_channel, fd);

	SIZE(rdma_cm_id);
	OFF(rdma_cm_id, verbs);
	OFF(rdma_cm_id, channel);
	OFF(rdma_cm_id, context);
	OFF(rdma_cm_id, qp);
	printf("rdma_cm_id.route.addr.src_addr %zu\n", offsetof(struct rdma_cm_id, route.addr.src_addr));
	printf("rdma_cm_id.route.addr.dst_addr %zu\n", offsetof(struct rdma_cm_id, route.addr.dst_addr));
	OFF(rdma_cm_id, ps);
	OFF(rdma_cm_id, port_num);

	SIZE(rdma_conn_param);
	OFF(rdma_conn_param, private_data);
	OFF(rdma_conn_param, private_data_len);
	OFF(rdma_conn_param, responder_resources);
	OFF(rdma_conn_param, initiator_depth);
	OFF(rdma_conn_param, flow_control);
	OFF(rdma_conn_param, retry_count);
	OFF(rdma_conn_param, rnr_retry_count);
	OFF(rdma_conn_param, srq);
	OFF(rdma_conn_param, qp_num);

	SIZE(rdma_cm_event);
	OFF(rdma_cm_event, id);
	OFF(rdma_cm_event, listen_id);
	OFF(rdma_cm_event, event);
	OFF(rdma_cm_event, status);
	OFF(rdma_cm_event, param);

	SIZE(sockaddr_in);
	OFF(sockaddr_in, sin_family);
	OFF(sockaddr_in, sin_port);
	OFF(sockaddr_in, sin_addr);
	SIZE(sockaddr_in6);
	OFF(sockaddr_in6, sin6_family);
	OFF(sockaddr_in6, sin6_port);
	OFF(sockaddr_in6, sin6_flowinfo);
	OFF(sockaddr_in6, sin6_addr);
	OFF(sockaddr_in6, sin6_scope_id);
	SIZE(sockaddr_storage);

	SIZE(epoll_event);
	OFF(epoll_event, events);
	OFF(epoll_event, data);
	SIZE(pollfd);
	OFF(pollfd, fd);
	OFF(pollfd, events);
	OFF(pollfd, revents);

	CONST(AF_INET);
	CONST(AF_INET6);
	CONST(RDMA_PS_TCP);
	CONST(RDMA_PS_UDP);
	CONST(RDMA_OPTION_ID);
	CONST(RDMA_OPTION_ID_ACK_TIMEOUT);
	CONST(IBV_QP_STATE);
	CONST(IBV_QP_TIMEOUT);
	CONST(IBV_QP_RETRY_CNT);
	CONST(IBV_QP_RNR_RETRY);
	CONST(IBV_QP_MIN_RNR_TIMER);
	CONST(IBV_QPS_RESET);
	CONST(IBV_QPS_INIT);
	CONST(IBV_QPS_RTR);
	CONST(IBV_QPS_RTS);
	CONST(IBV_QPS_SQD);
	CONST(IBV_QPS_SQE);
	CONST(IBV_QPS_ERR);
	CONST(IBV_QPT_RC);
	CONST(IBV_QPT_UD);
	CONST(IBV_ACCESS_LOCAL_WRITE);
	CONST(IBV_ACCESS_REMOTE_WRITE);
	CONST(IBV_ACCESS_REMOTE_READ);
	CONST(IBV_WR_RDMA_WRITE);
	CONST(IBV_WR_RDMA_WRITE_WITH_IMM);
	CONST(IBV_WR_SEND);
	CONST(IBV_WR_SEND_WITH_IMM);
	CONST(IBV_WR_RDMA_READ);
	CONST(IBV_SEND_SIGNALED);
	CONST(IBV_SEND_SOLICITED);
	CONST(IBV_SEND_INLINE);
	CONST(IBV_WC_SUCCESS);
	CONST(IBV_WC_WR_FLUSH_ERR);
	CONST(IBV_WC_REM_ACCESS_ERR);
	CONST(IBV_WC_RETRY_EXC_ERR);
	CONST(IBV_WC_SEND);
	CONST(IBV_WC_RDMA_WRITE);
	CONST(IBV_WC_RDMA_READ);
	CONST(IBV_WC_RECV);
	CONST(IBV_WC_RECV_RDMA_WITH_IMM);
	CONST(IBV_WC_WITH_IMM);
	CONST(IBV_PORT_ACTIVE);
	CONST(IBV_LINK_LAYER_INFINIBAND);
	CONST(IBV_LINK_LAYER_ETHERNET);
	CONST(IBV_EVENT_CQ_ERR);
	CONST(IBV_EVENT_QP_FATAL);
	CONST(IBV_EVENT_QP_REQ_ERR);
	CONST(IBV_EVENT_QP_ACCESS_ERR);
	CONST(IBV_EVENT_COMM_EST);
	CONST(IBV_EVENT_SQ_DRAINED);
	CONST(IBV_EVENT_PATH_MIG);
	CONST(IBV_EVENT_PATH_MIG_ERR);
	CONST(IBV_EVENT_DEVICE_FATAL);
	CONST(IBV_EVENT_PORT_ACTIVE);
	CONST(IBV_EVENT_PORT_ERR);
	CONST(IBV_EVENT_LID_CHANGE);
	CONST(IBV_EVENT_PKEY_CHANGE);
	CONST(IBV_EVENT_SM_CHANGE);
	CONST(IBV_EVENT_SRQ_ERR);
	CONST(IBV_EVENT_SRQ_LIMIT_REACHED);
	CONST(IBV_EVENT_QP_LAST_WQE_REACHED);
	CONST(IBV_EVENT_CLIENT_REREGISTER);
	CONST(IBV_EVENT_GID_CHANGE);
	CONST(IBV_EVENT_WQ_FATAL);
	CONST(RDMA_CM_EVENT_ADDR_RESOLVED);
	CONST(RDMA_CM_EVENT_TIMEWAIT_EXIT);
	CONST(F_GETFL);
	CONST(F_SETFL);
	CONST(O_NONBLOCK);
	CONST(O_CLOEXEC);
	CONST(EFD_NONBLOCK);
	CONST(EFD_CLOEXEC);
	CONST(EPOLL_CLOEXEC);
	CONST(EPOLL_CTL_ADD);
	CONST(EPOLL_CTL_DEL);
	CONST(EPOLL_CTL_MOD);
	CONST(EPOLLIN);
	CONST(EPOLLERR);
	CONST(EPOLLHUP);
	CONST(EPOLLET);
	CONST(EPOLLONESHOT);
	CONST(POLLIN);
	SIZE(rlimit);
	OFF(rlimit, rlim_cur);
	OFF(rlimit, rlim_max);
	CONST(RLIMIT_MEMLOCK);
	CONST(RLIM_INFINITY);
	CONST(EPERM);
	CONST(ENOENT);
	CONST(EINTR);
	CONST(EIO);
	CONST(EBADF);
	CONST(EAGAIN);
	CONST(ENOMEM);
	CONST(EACCES);
	CONST(EFAULT);
	CONST(EBUSY);
	CONST(EEXIST);
	CONST(ENODEV);
	CONST(EINVAL);
	CONST(EMFILE);
	CONST(ENOSPC);
	CONST(ENOSYS);
	CONST(EPROTONOSUPPORT);
	CONST(EOPNOTSUPP);
	CONST(EADDRINUSE);
	CONST(EADDRNOTAVAIL);
	CONST(ENETUNREACH);
	CONST(ECONNRESET);
	CONST(ENOBUFS);
	CONST(EISCONN);
	CONST(ENOTCONN);
	CONST(ETIMEDOUT);
	CONST(ECONNREFUSED);
	CONST(EHOSTUNREACH);
	CONST(EALREADY);
	CONST(EINPROGRESS);
	return 0;
}
