package org.rdmaconnector.ra;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.lang.reflect.RecordComponent;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.SetupRetry;
import org.rdmaconnector.verbs.engine.EventEngine;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** The defaults ra.xml shows a deployer are the ones the code uses: {@link ChannelSettings#DEFAULTS}. */
class RaXmlDefaultsTest {
    @Test
    void everyConnectionDefinitionPropertyOfRaXmlHasTheDefaultOfChannelSettings() throws Exception {
        Map<String, String> expected = new LinkedHashMap<>();
        for (RecordComponent component : ChannelSettings.class.getRecordComponents()) {
            Object value = component.getAccessor().invoke(ChannelSettings.DEFAULTS);
            String name = component.getName();
            expected.put(Character.toUpperCase(name.charAt(0)) + name.substring(1),
                value == null ? "" : value.toString()); // a null device name is written empty
        }
        assertEquals(expected, configPropertyValues("connection-definition"));
    }

    @Test
    void theAdaptersOwnPropertiesInRaXmlHaveTheDefaultsOfSetupRetryAndTheEngine() throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        Element adapter = (Element) factory.newDocumentBuilder().parse(new File("src/main/rar/META-INF/ra.xml"))
            .getElementsByTagNameNS("*", "resourceadapter").item(0);
        Map<String, String> values = new LinkedHashMap<>();
        for (org.w3c.dom.Node child = adapter.getFirstChild(); child != null; child = child.getNextSibling()) {
            if (child instanceof Element property && "config-property".equals(property.getLocalName())) {
                values.put(text(property, "config-property-name"), text(property, "config-property-value"));
            }
        }
        SetupRetry defaults = SetupRetry.DEFAULTS;
        assertEquals(Map.of("SetupIntervalMillis", "" + defaults.intervalMillis(), "SetupMaxIntervalMillis",
            "" + defaults.maxIntervalMillis(), "SetupAttempts", "" + defaults.attempts(), "BusyPollMicros",
            "" + EventEngine.DEFAULT_BUSY_POLL.toNanos() / 1000, "WaiterHoldMicros",
            "" + EventEngine.DEFAULT_WAITER_HOLD.toNanos() / 1000), values);
    }

    private static Map<String, String> configPropertyValues(String parent) throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        Element definition = (Element) factory.newDocumentBuilder().parse(new File("src/main/rar/META-INF/ra.xml"))
            .getElementsByTagNameNS("*", parent).item(0);
        Map<String, String> values = new LinkedHashMap<>();
        NodeList properties = definition.getElementsByTagNameNS("*", "config-property");
        for (int i = 0; i < properties.getLength(); i++) {
            Element property = (Element) properties.item(i);
            values.put(text(property, "config-property-name"), text(property, "config-property-value"));
        }
        return values;
    }

    private static String text(Element parent, String child) {
        return parent.getElementsByTagNameNS("*", child).item(0).getTextContent().trim();
    }
}
