/**
 * The event engine: one epoll loop per {@link org.rdmaconnector.verbs.engine.EventEngine} reads CM event channels,
 * completion channels and async event fds ({@link org.rdmaconnector.verbs.engine.Sources}), copies and acknowledges
 * what it reads, and delivers it on the caller's executor in order per key, with a bound on events in flight.
 */
@Version("0.1.0")
package org.rdmaconnector.verbs.engine;

import org.osgi.annotation.versioning.Version;
