package org.rdmaconnector.verbs;

/**
 * What ibv_query_qp(3) says of a queue pair: its state and the timers and retry counts of its reliable connection.
 *
 * @param state the current state
 * @param minRnrTimer what the queue pair's receiver-not-ready NAKs tell the peer to wait
 * @param ackTimeout the local ACK timeout, 4.096 us x 2^ackTimeout (0: infinite)
 * @param retryCount transport retries before a send fails with RETRY_EXC_ERR
 * @param rnrRetryCount retries after an RNR NAK before a send fails (7: for ever)
 */
public record QueuePairAttributes(QueuePairState state, RnrTimer minRnrTimer, int ackTimeout, int retryCount,
                                  int rnrRetryCount) {
}
