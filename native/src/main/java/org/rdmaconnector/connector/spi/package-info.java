/**
 * The machinery behind the connector API that the resource adapter and the OSGi bundle share, so that neither
 * writes it twice: {@link org.rdmaconnector.connector.spi.DeviceRegistry} (shared device contexts and their async
 * events), {@link org.rdmaconnector.connector.spi.ChannelSet} (the pooled set of channels behind a connection handle),
 * {@link org.rdmaconnector.connector.spi.ListenerHub} (listening ids shared by endpoints, accepted connections,
 * delivery of CM events and completions to {@link org.rdmaconnector.connector.spi.EndpointSink}s), and their settings.
 * Plain Java: no JCA or OSGi types.
 */
@Version("0.2.0")
package org.rdmaconnector.connector.spi;

import org.osgi.annotation.versioning.Version;
