package org.rdmaconnector.it.wildfly;

import org.rdmaconnector.ra.RdmaManagedConnectionFactory;

/** A factory with a primitive config property (section 20.7: a validation warning). */
public class PrimitivePropertyFactory extends RdmaManagedConnectionFactory {
    private static final long serialVersionUID = 1L;
    private int retries;

    public int getRetries() {
        return retries;
    }

    public void setRetries(int retries) {
        this.retries = retries;
    }
}
