/*
 * The RDMA CM connect/disconnect loop in C, the baseline of org.rdmaconnector.bench.CmConnectLoop, which does the
 * same steps in the same order through rdma-native: per connection, in one thread over two event channels,
 * resolve address and route, create a QP on each side, connect, accept, ESTABLISHED on both, the disconnect
 * handshake (DISCONNECTED on both), destroy QPs and ids. The PD and CQs are made once. The clock starts after
 * WARMUP untimed connections (default 0), as the Java loop's does. With a ROLE, one side only, for two hosts: "server"
 * listens on ADDRESS and accepts WARMUP + CONNECTIONS connections, "client" makes them to ADDRESS and times them; each
 * side takes the same steps in the same order as in the one-process loop.
 * Usage: cm_connect_loop [client|server] ADDRESS PORT CONNECTIONS [WARMUP].
 * Prints "C cm loop: N connections in S s = R connections/s" (the server role: "C cm server: N connections").
 * Build: gcc -O2 -o cm_connect_loop cm_connect_loop.c -lrdmacm -libverbs
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rdma/rdma_cma.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type type,
				    struct rdma_cm_id **id, struct rdma_cm_event *copy)
{
	struct rdma_cm_event *event;

	if (rdma_get_cm_event(ch, &event))
		die("rdma_get_cm_event");
	if (event->event != type) {
		fprintf(stderr, "expected %s, got %s (status %d)\n", rdma_event_str(type),
			rdma_event_str(event->event), event->status);
		exit(1);
	}
	if (id)
		*id = event->id;
	*copy = *event;
	rdma_ack_cm_event(event);
	return copy;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The PD and both CQs, made once, on the device of the first connection's id. */
static struct ibv_pd *make_pd_and_cqs(struct ibv_context *verbs, struct ibv_cq **client_cq, struct ibv_cq **server_cq)
{
	struct ibv_pd *pd = ibv_alloc_pd(verbs);

	*client_cq = ibv_create_cq(verbs, 16, NULL, NULL, 0);
	*server_cq = ibv_create_cq(verbs, 16, NULL, NULL, 0);
	if (!pd || !*client_cq || !*server_cq)
		die("pd/cq");
	return pd;
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *server_ch, *client_ch;
	struct rdma_cm_id *listener, *client, *server;
	struct rdma_cm_event copy;
	struct sockaddr_in addr;
	struct rdma_conn_param param;
	struct ibv_qp_init_attr qp_attr;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *client_cq = NULL, *server_cq = NULL;
	int connections, warmup, i, client_side = 1, server_side = 1;
	double start = 0, seconds;

	if (argc > 1 && (!strcmp(argv[1], "client") || !strcmp(argv[1], "server"))) {
		server_side = !strcmp(argv[1], "server");
		client_side = !server_side;
		argc--;
		argv++;
	}
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: %s [client|server] ADDRESS PORT CONNECTIONS [WARMUP]\n", argv[0]);
		return 2;
	}
	connections = atoi(argv[3]);
	warmup = argc == 5 ? atoi(argv[4]) : 0;
	memset(&addr, 0, sizeof addr);
	addr.sin_family = AF_INET;
	addr.sin_port = htons(atoi(argv[2]));
	if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1)
		die("inet_pton");

	server_ch = server_side ? rdma_create_event_channel() : NULL;
	client_ch = client_side ? rdma_create_event_channel() : NULL;
	if ((server_side && !server_ch) || (client_side && !client_ch))
		die("rdma_create_event_channel");
	if (server_side && (rdma_create_id(server_ch, &listener, NULL, RDMA_PS_TCP) ||
			    rdma_bind_addr(listener, (struct sockaddr *) &addr) || rdma_listen(listener, 16)))
		die("listen");

	memset(&param, 0, sizeof param);
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	memset(&qp_attr, 0, sizeof qp_attr);
	qp_attr.cap.max_send_wr = 4;
	qp_attr.cap.max_recv_wr = 4;
	qp_attr.cap.max_send_sge = 1;
	qp_attr.cap.max_recv_sge = 1;
	qp_attr.qp_type = IBV_QPT_RC;

	for (i = 0; i < warmup + connections; i++) {
		if (i == warmup)
			start = now();
		if (client_side) {
			if (rdma_create_id(client_ch, &client, NULL, RDMA_PS_TCP) ||
			    rdma_resolve_addr(client, NULL, (struct sockaddr *) &addr, 2000))
				die("rdma_resolve_addr");
			expect(client_ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, &copy);
			if (rdma_resolve_route(client, 2000))
				die("rdma_resolve_route");
			expect(client_ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, &copy);
			if (!pd)
				pd = make_pd_and_cqs(client->verbs, &client_cq, &server_cq);
			qp_attr.send_cq = qp_attr.recv_cq = client_cq;
			if (rdma_create_qp(client, pd, &qp_attr))
				die("rdma_create_qp client");
			if (rdma_connect(client, &param))
				die("rdma_connect");
		}
		if (server_side) {
			expect(server_ch, RDMA_CM_EVENT_CONNECT_REQUEST, &server, &copy);
			if (!pd)
				pd = make_pd_and_cqs(server->verbs, &client_cq, &server_cq);
			qp_attr.send_cq = qp_attr.recv_cq = server_cq;
			if (rdma_create_qp(server, pd, &qp_attr))
				die("rdma_create_qp server");
			if (rdma_accept(server, &param))
				die("rdma_accept");
		}
		if (client_side)
			expect(client_ch, RDMA_CM_EVENT_ESTABLISHED, NULL, &copy);
		if (server_side)
			expect(server_ch, RDMA_CM_EVENT_ESTABLISHED, NULL, &copy);
		if (client_side && rdma_disconnect(client))
			die("rdma_disconnect client");
		if (server_side) {
			expect(server_ch, RDMA_CM_EVENT_DISCONNECTED, NULL, &copy);
			if (rdma_disconnect(server))
				die("rdma_disconnect server");
		}
		if (client_side)
			expect(client_ch, RDMA_CM_EVENT_DISCONNECTED, NULL, &copy);
		if (server_side)
			rdma_destroy_qp(server);
		if (client_side)
			rdma_destroy_qp(client);
		if (server_side)
			rdma_destroy_id(server);
		if (client_side)
			rdma_destroy_id(client);
	}
	seconds = now() - start;
	if (client_side)
		printf("C cm loop: %d connections in %.3f s = %.1f connections/s\n", connections, seconds,
		       connections / seconds);
	else
		printf("C cm server: %d connections\n", warmup + connections);
	if (pd) {
		ibv_destroy_cq(server_cq);
		ibv_destroy_cq(client_cq);
		ibv_dealloc_pd(pd);
	}
	if (server_side) {
		rdma_destroy_id(listener);
		rdma_destroy_event_channel(server_ch);
	}
	if (client_side)
		rdma_destroy_event_channel(client_ch);
	return 0;
}
