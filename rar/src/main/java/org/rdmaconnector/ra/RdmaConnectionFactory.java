package org.rdmaconnector.ra;

import jakarta.resource.Referenceable;
import jakarta.resource.ResourceException;
import java.io.Serializable;
import org.rdmaconnector.connector.RdmaConnection;

/**
 * What an application injects ({@code @Resource(lookup = "java:/eis/rdma/default")}): a factory of
 * {@link RdmaConnection} handles on the server's pool of RDMA channel sets.
 */
public interface RdmaConnectionFactory extends Serializable, Referenceable {
    /**
     * A handle on a pooled channel set; close it to give the set back.
     *
     * @throws ResourceException when no set can be opened, e.g. the device is missing: the message names the device
     *     and the errno, and {@link ResourceException#getErrorCode()} is the errno's name (ENODEV, ...)
     */
    RdmaConnection getConnection() throws ResourceException;
}
