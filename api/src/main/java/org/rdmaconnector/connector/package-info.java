/**
 * What an application sees of the connector, the same in a Jakarta EE server (through the resource adapter) and in
 * OSGi (through the bundle's services): the {@link org.rdmaconnector.connector.RdmaConnection} handle of a pooled set
 * of channels, the {@link org.rdmaconnector.connector.RdmaEndpoint} it connects, the
 * {@link org.rdmaconnector.connector.WorkRequest} of each posted send, receive, RDMA write or read (one-sided
 * operations on a peer's {@link org.rdmaconnector.connector.RemoteRegion}), and the two inbound listener types
 * {@link org.rdmaconnector.connector.CmEventListener} and {@link org.rdmaconnector.connector.CompletionListener}.
 * Applications get one {@link org.rdmaconnector.connector.RdmaConnectionFactory} type in both worlds. This package is
 * the rdma-api artifact (compile against it, {@code provided}); rdma-native embeds and exports it at run time.
 */
@Version("0.2.0")
package org.rdmaconnector.connector;

import org.osgi.annotation.versioning.Version;
