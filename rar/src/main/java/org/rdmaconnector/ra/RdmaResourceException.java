package org.rdmaconnector.ra;

import jakarta.resource.ResourceException;
import org.rdmaconnector.connector.RdmaException;

/**
 * Why the adapter could not open RDMA channels: the message names the device and the failing call with its errno,
 * {@link #getErrorCode()} is the errno's name ({@code ENODEV}, {@code ENOSYS}, ...; {@code EINVAL} for settings the
 * device does not allow) and {@link #getFunction()} the C function. The connection factory throws it as is, also
 * when the server's pool wrapped it. Calls on a handle ({@code connect}, {@code register}) throw the unchecked
 * {@link RdmaException} itself: the handle's interface is shared with the OSGi bundle and declares no
 * {@link ResourceException}.
 */
public class RdmaResourceException extends ResourceException {
    private static final long serialVersionUID = 1L;

    /** An error with {@code message} and the errno name {@code errorCode}, caused by {@code cause}. */
    public RdmaResourceException(String message, String errorCode, Throwable cause) {
        super(message, errorCode);
        if (cause != null) {
            initCause(cause);
        }
    }

    /** The C function that failed, e.g. {@code rdma_get_devices}, or null when no RDMA call failed. */
    public String getFunction() {
        for (Throwable cause = getCause(); cause != null; cause = cause.getCause()) {
            if (cause instanceof RdmaException rdma) {
                return rdma.function();
            }
        }
        return null;
    }
}
