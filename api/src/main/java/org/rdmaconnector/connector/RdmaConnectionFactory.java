package org.rdmaconnector.connector;

/**
 * A factory of {@link RdmaConnection} handles on a pool of RDMA channel sets, the same type in both worlds: an
 * application server injects it ({@code @Resource(lookup = "java:/eis/rdma/default")}), OSGi registers one service
 * per factory configuration. Code written against it runs unchanged in either.
 */
public interface RdmaConnectionFactory {
    /**
     * A handle on a pooled channel set; close it to give the set back.
     *
     * @throws RdmaException when no set can be opened, e.g. the device is missing: the message names the device and
     *     the errno, and {@link RdmaException#errnoName()} is its name (ENODEV, ...)
     * @throws IllegalStateException when no set can be had for another reason: all are in use past the pool's
     *     timeout, or the container refused (its exception is the cause)
     */
    RdmaConnection getConnection();
}
