# Sourced by the payloads of vm-bench.sh and vm-perftest.sh inside the soft-RDMA VM: rxe's counters of a run.
# rxe_counts: its requester retries (completer_retry_err: a retransmission timer that fired, or a sequence NAK) and
# receiver-not-ready NAKs (rcvd_rnr_err: a send found no receive posted) so far, "R N", both sides (one device).
rxe_counts() {
    local c=/sys/class/infiniband/rxe0/ports/1/hw_counters
    echo "$(cat $c/completer_retry_err 2>/dev/null || echo 0) $(cat $c/rcvd_rnr_err 2>/dev/null || echo 0)"
}
# rxe_since "R N" (an earlier rxe_counts): how many more of each since then, "R N"
rxe_since() {
    local a b r n
    read -r a b <<< "$1"
    read -r r n <<< "$(rxe_counts)"
    echo "$((r - a)) $((n - b))"
}
