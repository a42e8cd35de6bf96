/**
 * The Jakarta Connectors 2.1 resource adapter: outbound, {@link org.rdmaconnector.connector.RdmaConnectionFactory} hands out
 * {@link org.rdmaconnector.connector.RdmaConnection} handles on pooled
 * {@link org.rdmaconnector.ra.RdmaManagedConnection}s; inbound, {@link org.rdmaconnector.ra.RdmaActivationSpec}
 * activates message endpoints implementing {@link org.rdmaconnector.connector.CmEventListener} or
 * {@link org.rdmaconnector.connector.CompletionListener}. The work is done by the shared machinery of
 * {@code org.rdmaconnector.connector.spi}, on threads of the server's WorkManager.
 */
package org.rdmaconnector.ra;
