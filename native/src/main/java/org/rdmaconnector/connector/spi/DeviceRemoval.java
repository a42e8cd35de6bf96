package org.rdmaconnector.connector.spi;

import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.AsyncEvent;
import org.rdmaconnector.verbs.AsyncEventType;
import org.rdmaconnector.verbs.Device;
import org.rdmaconnector.verbs.RdmaErrors;
import org.rdmaconnector.verbs.jna.Layout;

/**
 * A device removed under the connector ({@code rdma link delete}, hot-unplug, a driver reset), as seen by one of
 * its users: the one wording of "device removed" for the error a user gets, the async event pools and containers
 * get, and the log. rdma_get_cm_event(3): on {@code RDMA_CM_EVENT_DEVICE_REMOVAL} the user must release what it
 * holds on the device; the kernel cannot finish the removal before (a device without disassociate, such as rxe).
 *
 * @param device the removed device (name, GUID, kernel index)
 * @param seenAs how it was noticed, e.g. "DEVICE_REMOVAL on a CM id"
 */
record DeviceRemoval(Device device, String seenAs) {
    /** Noticed as RDMA_CM_EVENT_DEVICE_REMOVAL on a CM id bound to {@code device}. */
    static DeviceRemoval onCmId(Device device) {
        return new DeviceRemoval(device, "DEVICE_REMOVAL on a CM id");
    }

    /** Noticed as {@code device} missing from the kernel's device list (ibv_get_device_list(3)). */
    static DeviceRemoval unlisted(Device device) {
        return new DeviceRemoval(device, "no longer listed by the kernel");
    }

    /** "device removed: rxe1 (guid ..., index 1) (how it was seen; ...)". */
    String description() {
        return "device removed: " + device + " (" + seenAs + "; rdma link delete, hot-unplug or a driver reset)";
    }

    /**
     * The error of {@code function} on the removed device (ENODEV): a work request that can never complete, a post,
     * connect or registration after the removal. A fresh exception per call, so each thrower has its own trace.
     */
    RdmaException error(String function) {
        return RdmaErrors.explained(function, Layout.ENODEV, description() + "; nothing posted on it completes: "
            + "close the RdmaConnection (the kernel finishes the removal once it is closed), the next one opens on a "
            + "device present");
    }

    /** The removal as the {@link AsyncEventType#DEVICE_FATAL} event that pools and containers act on. */
    AsyncEvent asyncEvent() {
        return new AsyncEvent(device.name(), AsyncEventType.DEVICE_FATAL, Layout.IBV_EVENT_DEVICE_FATAL, 0,
            description() + "; what is open on it must be closed");
    }
}
