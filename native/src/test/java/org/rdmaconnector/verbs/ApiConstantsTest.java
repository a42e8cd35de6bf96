package org.rdmaconnector.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.PortAttributes;
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WcStatus;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.verbs.jna.IbVerbs;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.Mem;

/**
 * The API (rdma-api, no native code) spells the C enums it shows as Java constants; here they are checked against
 * the installed headers ({@link Layout}, read from them at build time) and against libibverbs itself.
 */
class ApiConstantsTest {
    @Test
    void cmEventTypesAreTheHeadersEnumInOrder() {
        assertEquals(Layout.RDMA_CM_EVENT_ADDR_RESOLVED, CmEventType.ADDR_RESOLVED.value());
        assertEquals(Layout.RDMA_CM_EVENT_TIMEWAIT_EXIT, CmEventType.TIMEWAIT_EXIT.value());
        assertEquals(Layout.RDMA_CM_EVENT_TIMEWAIT_EXIT + 1, CmEventType.values().length, "no gaps, nothing after");
    }

    @Test
    void workCompletionOpcodesAreTheHeaders() {
        assertEquals(Layout.IBV_WC_SEND, WcOpcode.SEND.value());
        assertEquals(Layout.IBV_WC_RDMA_WRITE, WcOpcode.RDMA_WRITE.value());
        assertEquals(Layout.IBV_WC_RDMA_READ, WcOpcode.RDMA_READ.value());
        assertEquals(Layout.IBV_WC_RECV, WcOpcode.RECV.value());
        assertEquals(Layout.IBV_WC_RECV_RDMA_WITH_IMM, WcOpcode.RECV_RDMA_WITH_IMM.value());
        assertEquals(Layout.IBV_WC_WITH_IMM, WorkCompletion.WITH_IMM);
    }

    @Test
    void workCompletionStatusesAreTheHeadersWithLibibverbsTexts() {
        assertEquals(Layout.IBV_WC_SUCCESS, WcStatus.SUCCESS.value());
        assertEquals(Layout.IBV_WC_WR_FLUSH_ERR, WcStatus.WR_FLUSH_ERR.value());
        assertEquals(Layout.IBV_WC_REM_ACCESS_ERR, WcStatus.REM_ACCESS_ERR.value());
        assertEquals(Layout.IBV_WC_RETRY_EXC_ERR, WcStatus.RETRY_EXC_ERR.value());
        for (int value = -1; value <= WcStatus.values().length + 1; value++) {
            assertEquals(Mem.string(IbVerbs.ibv_wc_status_str(value)), WcStatus.text(value), "status " + value);
        }
    }

    @Test
    void portConstantsAreTheHeaders() {
        assertEquals(Layout.IBV_PORT_ACTIVE, PortAttributes.PORT_ACTIVE);
        assertEquals(Layout.IBV_LINK_LAYER_ETHERNET, PortAttributes.LINK_LAYER_ETHERNET);
    }
}
