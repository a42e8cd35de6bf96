/*
 * One RDMA READ at a time in C, busy polling, the baseline of org.rdmaconnector.bench.RawRead: how long
 * ibv_post_send itself takes, the whole round trip, and how many READs were complete when the post returned (on rxe
 * the kernel may run the whole READ inside the post's system call). The server registers SIZE bytes with remote read
 * and hands address and rkey over in the accept's private data (8 + 4 bytes, host order).
 * Usage: read_post server|client ADDRESS PORT SIZE ITERS WARMUP. The server prints "ready" once it listens; the
 * client prints "C read_post: post p50=P us, round trip p50=T us, complete after the post N of ITERS".
 * Build: gcc -O2 -o read_post read_post.c -lrdmacm -libverbs
 */
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rdma/rdma_cma.h>

struct region {
	uint64_t address;
	uint32_t rkey;
} __attribute__((packed));

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type type)
{
	struct rdma_cm_event *event;

	if (rdma_get_cm_event(ch, &event))
		die("rdma_get_cm_event");
	if (event->event != type) {
		fprintf(stderr, "expected %s, got %s (status %d)\n", rdma_event_str(type),
			rdma_event_str(event->event), event->status);
		exit(1);
	}
	return event;
}

static int by_value(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* a PD, a CQ without a completion channel (busy polling) and an RC QP on id */
static struct ibv_cq *queue_pair(struct rdma_cm_id *id, struct ibv_pd **pd)
{
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_cq *cq;

	*pd = ibv_alloc_pd(id->verbs);
	cq = *pd ? ibv_create_cq(id->verbs, 8, NULL, NULL, 0) : NULL;
	if (!cq)
		die("ibv_alloc_pd/ibv_create_cq");
	attr.send_cq = attr.recv_cq = cq;
	if (rdma_create_qp(id, *pd, &attr))
		die("rdma_create_qp");
	return cq;
}

int main(int argc, char **argv)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 6,
					 .rnr_retry_count = 7 };
	struct rdma_event_channel *ch;
	struct rdma_cm_event *event;
	struct rdma_cm_id *id;
	struct addrinfo *ai;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct region region;
	int size, iters, warmup, complete = 0;
	long *posts, *trips;
	char *buffer;

	if (argc != 7 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: read_post server|client ADDRESS PORT SIZE ITERS WARMUP\n");
		return 2;
	}
	size = atoi(argv[4]);
	iters = atoi(argv[5]);
	warmup = atoi(argv[6]);
	if (size <= 0 || iters <= 0 || warmup < 0 || getaddrinfo(argv[2], argv[3], NULL, &ai))
		die("arguments");
	buffer = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
	ch = rdma_create_event_channel();
	if (!buffer || !ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("setup");
	memset(buffer, 7, size);
	if (!strcmp(argv[1], "server")) {
		struct rdma_cm_id *peer;

		if (rdma_bind_addr(id, ai->ai_addr) || rdma_listen(id, 1))
			die("rdma_bind_addr/rdma_listen");
		printf("ready\n");
		fflush(stdout);
		event = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
		peer = event->id;
		rdma_ack_cm_event(event);
		queue_pair(peer, &pd);
		mr = ibv_reg_mr(pd, buffer, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
		if (!mr)
			die("ibv_reg_mr");
		region.address = (uintptr_t)buffer;
		region.rkey = mr->rkey;
		param.private_data = &region;
		param.private_data_len = sizeof(region);
		if (rdma_accept(peer, &param))
			die("rdma_accept");
		rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
		rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
		rdma_destroy_qp(peer);
		ibv_dereg_mr(mr);
		return 0;
	}
	if (rdma_resolve_addr(id, NULL, ai->ai_addr, 2000))
		die("rdma_resolve_addr");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(id, 2000))
		die("rdma_resolve_route");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	cq = queue_pair(id, &pd);
	mr = ibv_reg_mr(pd, buffer, size, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || rdma_connect(id, &param))
		die("ibv_reg_mr/rdma_connect");
	event = expect(ch, RDMA_CM_EVENT_ESTABLISHED);
	if (event->param.conn.private_data_len < sizeof(region)) {
		fprintf(stderr, "no region in the accept's private data\n");
		return 1;
	}
	memcpy(&region, event->param.conn.private_data, sizeof(region));
	rdma_ack_cm_event(event);
	posts = malloc(iters * sizeof(long));
	trips = malloc(iters * sizeof(long));
	for (int i = -warmup; i < iters; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)buffer, .length = size, .lkey = mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
					  .send_flags = IBV_SEND_SIGNALED,
					  .wr.rdma = { .remote_addr = region.address, .rkey = region.rkey } };
		struct ibv_send_wr *bad;
		struct ibv_wc wc;
		long start = now_ns(), posted;
		int n;

		if (ibv_post_send(id->qp, &wr, &bad))
			die("ibv_post_send");
		posted = now_ns();
		n = ibv_poll_cq(cq, 1, &wc);
		if (n > 0 && i >= 0)
			complete++;
		while (n == 0)
			n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0 || wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "READ %d: %s\n", i, n < 0 ? "ibv_poll_cq failed" : ibv_wc_status_str(wc.status));
			return 1;
		}
		if (i >= 0) {
			posts[i] = posted - start;
			trips[i] = now_ns() - start;
		}
	}
	qsort(posts, iters, sizeof(long), by_value);
	qsort(trips, iters, sizeof(long), by_value);
	printf("C read_post: post p50=%.1f us, round trip p50=%.1f us, complete after the post %d of %d\n",
	       posts[iters / 2] / 1e3, trips[iters / 2] / 1e3, complete, iters);
	rdma_disconnect(id);
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
	rdma_destroy_qp(id);
	ibv_dereg_mr(mr);
	return 0;
}
