/**
 * The object model over libibverbs and librdmacm: one class per verbs or RDMA CM object ({@link
 * org.rdmaconnector.verbs.EventChannel}, {@link org.rdmaconnector.verbs.CmId}, {@link
 * org.rdmaconnector.verbs.DeviceContext}, {@link org.rdmaconnector.verbs.ProtectionDomain}, {@link
 * org.rdmaconnector.verbs.MemoryRegion}, {@link org.rdmaconnector.verbs.CompletionQueue}, {@link
 * org.rdmaconnector.verbs.QueuePair}, ...), each {@link java.lang.AutoCloseable} in an ownership tree where a parent
 * closes its children first and a closed object throws instead of touching freed memory. Failures of the C library
 * are {@link org.rdmaconnector.connector.RdmaException}s naming the function and the errno
 * ({@link org.rdmaconnector.verbs.RdmaErrors}).
 */
@Version("0.2.0")
package org.rdmaconnector.verbs;

import org.osgi.annotation.versioning.Version;
