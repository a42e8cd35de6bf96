/**
 * The OSGi face of rdma-connector: {@link org.rdmaconnector.connector.RdmaConnectionFactory} services (with their
 * {@link org.rdmaconnector.osgi.ConnectionPool} view), one per Config Admin factory configuration of PID
 * {@value org.rdmaconnector.osgi.ConnectionPool#FACTORY_PID}, and the whiteboard:
 * services implementing {@link org.rdmaconnector.connector.CmEventListener} or
 * {@link org.rdmaconnector.connector.CompletionListener} with the {@code rdma.*} properties of
 * {@link org.rdmaconnector.osgi.Whiteboard} get the events of a listener on that address.
 */
@Version("0.1.0")
package org.rdmaconnector.osgi;

import org.osgi.annotation.versioning.Version;
