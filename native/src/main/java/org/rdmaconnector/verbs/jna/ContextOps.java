package org.rdmaconnector.verbs.jna;

/**
 * The {@code static inline} verbs of one {@code ibv_context}: {@code ibv_poll_cq}, {@code ibv_req_notify_cq},
 * {@code ibv_post_send} and {@code ibv_post_recv} call the provider's functions in {@code ibv_context->ops}
 * ({@link OpsTable}). Each returns what its man page says: {@code ibv_req_notify_cq} and the posts return the errno
 * itself, and after a negative return of {@code ibv_poll_cq} {@link Mem#errno()} holds the errno it left (the FFM
 * path captures errno for that call only). Pointers are {@code long} addresses, live while the caller holds its
 * object. The implementation is the one {@link OpsPath#chosen()} for this JVM.
 */
public interface ContextOps {
    /** {@code int ibv_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)} */
    int ibv_poll_cq(long cq, int numEntries, long wc);

    /** {@code int ibv_req_notify_cq(struct ibv_cq *cq, int solicited_only)} */
    int ibv_req_notify_cq(long cq, int solicitedOnly);

    /** {@code int ibv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)} */
    int ibv_post_send(long qp, long wr, long badWr);

    /** {@code int ibv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)} */
    int ibv_post_recv(long qp, long wr, long badWr);

    /** The path these calls take. */
    OpsPath path();

    /** The ops of {@code context} (a live {@code struct ibv_context *}) on the path chosen for this JVM. */
    static ContextOps of(long context) {
        return OpsPath.chosen().bind(OpsTable.of(context));
    }
}
