package org.rdmaconnector.verbs;

import java.util.Arrays;

/**
 * Connection parameters ({@code struct rdma_conn_param}, rdma_connect(3), rdma_accept(3)), and as received in a
 * CM event. Private data is copied in and out. The transport limits its length (RoCE/IB: 56 bytes in a connect
 * request, 196 in an accept, 148 in a reject); a received event reports the transport's full private data area, of
 * which the sender's bytes are the prefix.
 *
 * @param privateData bytes carried with the request or reply, at most 255 (never null)
 * @param responderResources outstanding RDMA reads/atomics the local side accepts (0-255)
 * @param initiatorDepth outstanding RDMA reads/atomics the local side issues (0-255)
 * @param flowControl whether hardware flow control is used (0 or 1)
 * @param retryCount transport retries on errors (0-7; ignored when accepting)
 * @param rnrRetryCount retries after receiver-not-ready (0-7, 7 = forever)
 * @param srq whether the QP uses a shared receive queue (only without a QP on the id)
 * @param qpNumber the QP number (only without a QP on the id)
 */
public record ConnectionParameters(byte[] privateData, int responderResources, int initiatorDepth, int flowControl,
                                   int retryCount, int rnrRetryCount, int srq, int qpNumber) {
    /** The largest private data rdma_conn_param can carry (its length is a uint8_t). */
    public static final int MAX_PRIVATE_DATA = 255;

    /** Validates ranges and copies the private data. */
    public ConnectionParameters {
        privateData = privateData == null ? new byte[0] : privateData.clone();
        if (privateData.length > MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("privateData must be at most " + MAX_PRIVATE_DATA + " bytes, was "
                + privateData.length);
        }
        check("responderResources", responderResources, 255);
        check("initiatorDepth", initiatorDepth, 255);
        check("flowControl", flowControl, 1);
        check("retryCount", retryCount, 7);
        check("rnrRetryCount", rnrRetryCount, 7);
        check("srq", srq, 1);
    }

    private static void check(String name, int value, int max) {
        if (value < 0 || value > max) {
            throw new IllegalArgumentException(name + " must be from 0 to " + max + ", was " + value);
        }
    }

    /**
     * 1 read in each direction, 6 transport retries, RNR retry forever (receiver-not-ready is the peer's flow
     * control). Not rping's 7 retries: Soft-RoCE (rxe) takes a retry count of 7 for "retry forever", so a send to a
     * peer that died would never complete; with 6 it fails with {@code IBV_WC_RETRY_EXC_ERR} on every device.
     */
    public static ConnectionParameters defaults() {
        return new ConnectionParameters(new byte[0], 1, 1, 0, 6, 7, 0, 0);
    }

    /** These parameters with {@code data} as private data. */
    public ConnectionParameters withPrivateData(byte[] data) {
        return new ConnectionParameters(data, responderResources, initiatorDepth, flowControl, retryCount,
            rnrRetryCount, srq, qpNumber);
    }

    /** A copy of the private data. */
    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConnectionParameters p && Arrays.equals(privateData, p.privateData)
            && responderResources == p.responderResources && initiatorDepth == p.initiatorDepth
            && flowControl == p.flowControl && retryCount == p.retryCount && rnrRetryCount == p.rnrRetryCount
            && srq == p.srq && qpNumber == p.qpNumber;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(privateData) * 31 + qpNumber;
    }

    @Override
    public String toString() {
        return "ConnectionParameters[" + privateData.length + " bytes private data, responderResources="
            + responderResources + ", initiatorDepth=" + initiatorDepth + ", retryCount=" + retryCount
            + ", rnrRetryCount=" + rnrRetryCount + ", qpNumber=" + qpNumber + "]";
    }
}
