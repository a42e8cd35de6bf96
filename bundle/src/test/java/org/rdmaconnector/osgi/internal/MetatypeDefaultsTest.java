package org.rdmaconnector.osgi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.RecordComponent;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.spi.ChannelSettings;

/** The defaults Config Admin and {@code config:meta} show are the ones the code uses: {@link ChannelSettings}. */
class MetatypeDefaultsTest {
    @Test
    void everyChannelAttributeOfTheMetatypeHasTheDefaultOfChannelSettings() throws Exception {
        Map<String, Object> expected = new LinkedHashMap<>();
        Map<String, Object> metatype = new LinkedHashMap<>();
        for (RecordComponent component : ChannelSettings.class.getRecordComponents()) {
            Object value = component.getAccessor().invoke(ChannelSettings.DEFAULTS);
            expected.put(component.getName(), value == null ? "" : value); // a null device name is configured empty
            // bnd writes the metatype XML from these annotation defaults
            metatype.put(component.getName(),
                PooledConnectionFactory.Config.class.getMethod(component.getName()).getDefaultValue());
        }
        assertEquals(expected, metatype);
    }
}
