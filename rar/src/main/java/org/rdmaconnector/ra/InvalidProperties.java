package org.rdmaconnector.ra;

import jakarta.resource.spi.InvalidPropertyException;
import java.beans.IntrospectionException;
import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.List;
import org.rdmaconnector.connector.spi.SettingProblem;

/** Setting problems as the {@link InvalidPropertyException} a container shows, each property named by descriptor. */
final class InvalidProperties {
    private InvalidProperties() {
    }

    /**
     * The exception for {@code problems} (not empty) of the JavaBean {@code bean}.
     *
     * @param what what is invalid, e.g. {@code "invalid RDMA activation"}
     */
    static InvalidPropertyException exception(String what, List<SettingProblem> problems, Class<?> bean) {
        InvalidPropertyException e = new InvalidPropertyException(what + ": " + SettingProblem.join(problems));
        List<PropertyDescriptor> descriptors = new ArrayList<>();
        for (String property : problems.stream().map(SettingProblem::property).distinct().toList()) {
            try {
                descriptors.add(new PropertyDescriptor(Character.toLowerCase(property.charAt(0))
                    + property.substring(1), bean));
            } catch (IntrospectionException ignored) {
                // not a property of the bean: the message still names it
            }
        }
        e.setInvalidPropertyDescriptors(descriptors.toArray(new PropertyDescriptor[0]));
        return e;
    }
}
