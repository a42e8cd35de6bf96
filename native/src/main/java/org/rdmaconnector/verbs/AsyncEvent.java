package org.rdmaconnector.verbs;

/**
 * An asynchronous event of a device ({@code struct ibv_async_event}, ibv_get_async_event(3)), copied and already
 * acknowledged.
 *
 * @param device the name of the device that reported it
 * @param type the event type
 * @param rawType the C value of the type (useful when {@code type} is {@link AsyncEventType#UNKNOWN})
 * @param portNumber the port for port events, otherwise 0
 * @param description {@code ibv_event_type_str(3)}
 */
public record AsyncEvent(String device, AsyncEventType type, int rawType, int portNumber, String description) {
}
