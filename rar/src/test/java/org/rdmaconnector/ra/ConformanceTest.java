package org.rdmaconnector.ra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.resource.spi.ConnectionManager;
import jakarta.resource.spi.ManagedConnectionFactory;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.ResourceBundle;
import org.jboss.jca.common.api.metadata.spec.Connector;
import org.jboss.jca.common.api.metadata.spec.ConnectionDefinition;
import org.jboss.jca.common.api.metadata.spec.MessageListener;
import org.jboss.jca.common.metadata.spec.RaParser;
import org.jboss.jca.validator.Failure;
import org.jboss.jca.validator.Key;
import org.jboss.jca.validator.Validate;
import org.jboss.jca.validator.ValidateClass;
import org.jboss.jca.validator.ValidateObject;
import org.jboss.jca.validator.Validator;
import org.junit.jupiter.api.Test;

/**
 * The adapter passes IronJacamar's archive validation (the rules WildFly applies on deploy; it refuses warnings
 * with fail-on-warn), with the config properties of our ra.xml; and the validator does catch a broken factory.
 */
class ConformanceTest {
    private static Connector raXml() throws Exception {
        try (InputStream in = Files.newInputStream(Path.of("src/main/rar/META-INF/ra.xml"))) {
            Connector connector = new RaParser().parse(in);
            connector.validate();
            return connector;
        }
    }

    private static String text(List<Failure> failures) {
        ResourceBundle bundle = new Validator().getResourceBundle();
        StringBuilder out = new StringBuilder();
        for (Failure failure : failures) {
            out.append('\n').append(failure.asText(bundle));
        }
        return out.toString();
    }

    @Test
    void theDescriptorAndClassesPassIronJacamarsRules() throws Exception {
        Connector connector = raXml();
        ConnectionDefinition definition = connector.getResourceadapter().getOutboundResourceadapter()
            .getConnectionDefinitions().get(0);
        assertEquals(RdmaManagedConnectionFactory.class.getName(),
            definition.getManagedConnectionFactoryClass().getValue());
        List<MessageListener> listeners = connector.getResourceadapter().getInboundResourceadapter()
            .getMessageadapter().getMessagelisteners();
        assertEquals(List.of("org.rdmaconnector.connector.CmEventListener",
            "org.rdmaconnector.connector.CompletionListener"),
            listeners.stream().map(l -> l.getMessagelistenerType().getValue()).toList());

        RdmaResourceAdapter ra = new RdmaResourceAdapter();
        RdmaManagedConnectionFactory mcf = new RdmaManagedConnectionFactory();
        mcf.setResourceAdapter(ra);
        ConnectionManager manager = (factory, info) -> null;
        Object cf = mcf.createConnectionFactory(manager);
        List<Validate> checks = List.of(
            new ValidateObject(Key.RESOURCE_ADAPTER, ra, connector.getResourceadapter().getConfigProperties()),
            new ValidateObject(Key.MANAGED_CONNECTION_FACTORY, mcf, definition.getConfigProperties()),
            new ValidateObject(Key.CONNECTION_FACTORY, cf),
            new ValidateClass(Key.ACTIVATION_SPEC, RdmaActivationSpec.class,
                listeners.get(0).getActivationspec().getConfigProperties()));
        // (a ManagedConnection needs a device; WildFly validates none at deploy either)
        List<Failure> failures = new Validator().validate(checks);
        assertTrue(failures == null || failures.isEmpty(), () -> "validation failures:" + text(failures));
    }

    @Test
    void theValidatorCatchesAFactoryWithPrimitivePropertiesAndNoEquals() throws Exception {
        ManagedConnectionFactory broken = new BrokenFactory();
        List<Failure> failures = new Validator().validate(List.of(
            new ValidateObject(Key.MANAGED_CONNECTION_FACTORY, broken, raXml().getResourceadapter()
                .getOutboundResourceadapter().getConnectionDefinitions().get(0).getConfigProperties())));
        assertFalse(failures == null || failures.isEmpty(), "the validator must reject BrokenFactory");
        String text = text(failures);
        assertTrue(text.contains("equals"), text);
    }

    /** A factory the rules refuse: no equals/hashCode. */
    public static class BrokenFactory implements ManagedConnectionFactory {
        private static final long serialVersionUID = 1L;

        @Override
        public Object createConnectionFactory(ConnectionManager manager) {
            return null;
        }

        @Override
        public Object createConnectionFactory() {
            return null;
        }

        @Override
        public jakarta.resource.spi.ManagedConnection createManagedConnection(javax.security.auth.Subject subject,
            jakarta.resource.spi.ConnectionRequestInfo info) {
            return null;
        }

        @Override
        public jakarta.resource.spi.ManagedConnection matchManagedConnections(
            @SuppressWarnings("rawtypes") java.util.Set set, javax.security.auth.Subject subject,
            jakarta.resource.spi.ConnectionRequestInfo info) {
            return null;
        }

        @Override
        public void setLogWriter(java.io.PrintWriter out) {
        }

        @Override
        public java.io.PrintWriter getLogWriter() {
            return null;
        }
    }
}
