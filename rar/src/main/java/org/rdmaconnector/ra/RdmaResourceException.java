package org.rdmaconnector.ra;

import jakarta.resource.ResourceException;

/**
 * Why the adapter could not open RDMA channels: the message names the device and the failing call with its errno,
 * and {@link #getErrorCode()} is the errno's name ({@code ENODEV}, {@code ENOSYS}, ...). The connection factory
 * throws it as is, also when the server's pool wrapped it.
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
}
