package org.rdmaconnector.it.felix.probe;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.rdmaconnector.connector.CmEventListener;
import org.rdmaconnector.connector.CompletionListener;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaConnectionFactory;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.osgi.ConnectionPool;

/**
 * Drives rdma-osgi from inside the framework for tests outside it, which share only JDK types with the bundles: the
 * service is a {@code BiFunction} of an operation name and its arguments, with the property {@value #PROPERTY}.
 * Immediate: it holds the echo services it registered, which must not go when a test ungets the probe. Operations:
 * <ul>
 * <li>{@code configureFactory {name, properties}}: creates or updates the factory configuration {@code name} of
 * {@value ConnectionPool#FACTORY_PID}; returns its PID;</li>
 * <li>{@code deleteConfiguration {pid}};</li>
 * <li>{@code factoryStatus {pid}}: the factory service's status line, or null while there is none;</li>
 * <li>{@code register {properties}}: registers an {@link Echo} as a CmEventListener and a CompletionListener with
 * these service properties; returns its service id;</li>
 * <li>{@code registerPlainEcho {properties}}: the same with a {@link PlainEcho}, which only echoes and counts (for
 * the layered benchmark); returns its service id; {@code served {id}}: its messages echoed and connections
 * disconnected so far, a {@code long[2]};</li>
 * <li>{@code setProperties {id, properties}}, {@code unregister {id}}, {@code journal {id}};</li>
 * <li>{@code exchange {pid, address, port, messages, size}}: a client through the factory service: a pooled
 * connection, an endpoint to the address, and for each message a receive posted for its echo, the send, and the echo
 * awaited ({@code tryWaitForCompletion} first); returns what it saw.</li>
 * </ul>
 */
@Component(service = BiFunction.class, property = Probe.PROPERTY + "=true", immediate = true)
public class Probe implements BiFunction<String, Map<String, Object>, Object> {
    /** The service property that marks the probe. */
    public static final String PROPERTY = "rdma.it.probe";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final BundleContext context;
    private final ConfigurationAdmin configurations;
    private final Map<Long, Registered> echoes = new ConcurrentHashMap<>();

    private record Registered(Object echo, ServiceRegistration<?> registration) {
    }

    @Activate
    public Probe(BundleContext context, @Reference ConfigurationAdmin configurations) {
        this.context = context;
        this.configurations = configurations;
    }

    @Deactivate
    void stop() {
        echoes.values().forEach(r -> r.registration().unregister());
        echoes.clear();
    }

    @Override
    @SuppressWarnings("unchecked")
    public Object apply(String operation, Map<String, Object> args) {
        try {
            return switch (operation) {
                case "configureFactory" -> {
                    Configuration configuration = configurations.getFactoryConfiguration(
                        ConnectionPool.FACTORY_PID, (String) args.get("name"), "?");
                    configuration.update(dictionary((Map<String, Object>) args.get("properties")));
                    yield configuration.getPid();
                }
                case "deleteConfiguration" -> {
                    configurations.getConfiguration((String) args.get("pid"), "?").delete();
                    yield null;
                }
                case "factoryStatus" -> withService(ConnectionPool.class, (String) args.get("pid"),
                    p -> p == null ? null : p.status());
                case "register" -> register(new Echo(), (Map<String, Object>) args.get("properties"));
                case "registerPlainEcho" -> register(new PlainEcho(), (Map<String, Object>) args.get("properties"));
                case "served" -> ((PlainEcho) echo(args).echo()).served();
                case "setProperties" -> {
                    echo(args).registration().setProperties(
                        dictionary((Map<String, Object>) args.get("properties")));
                    yield null;
                }
                case "unregister" -> {
                    echo(args).registration().unregister();
                    echoes.remove((Long) args.get("id"));
                    yield null;
                }
                case "journal" -> ((Echo) echo(args).echo()).journal();
                case "exchange" -> withService(RdmaConnectionFactory.class, (String) args.get("pid"), f -> exchange(f, args));
                default -> throw new IllegalArgumentException("no probe operation " + operation);
            };
        } catch (IOException e) {
            throw new UncheckedIOException(operation + " failed", e);
        }
    }

    /** Registers {@code echo} as a CmEventListener and a CompletionListener; returns its service id. */
    private <E extends CmEventListener & CompletionListener> long register(E echo, Map<String, Object> properties) {
        ServiceRegistration<?> registration = context.registerService(
            new String[] {CmEventListener.class.getName(), CompletionListener.class.getName()}, echo,
            dictionary(properties));
        long id = (Long) registration.getReference().getProperty("service.id");
        echoes.put(id, new Registered(echo, registration));
        return id;
    }

    private Registered echo(Map<String, Object> args) {
        Registered registered = echoes.get((Long) args.get("id"));
        if (registered == null) {
            throw new IllegalArgumentException("no echo service " + args.get("id") + " registered by the probe");
        }
        return registered;
    }

    /** Runs {@code use} with the {@code type} service of {@code pid}, or with null when there is none. */
    private <S, T> T withService(Class<S> type, String pid, java.util.function.Function<S, T> use) {
        try {
            var references = context.getServiceReferences(type, "(service.pid=" + pid + ")");
            if (references.isEmpty()) {
                return use.apply(null);
            }
            ServiceReference<S> reference = references.iterator().next();
            try {
                return use.apply(context.getService(reference));
            } finally {
                context.ungetService(reference);
            }
        } catch (InvalidSyntaxException e) {
            throw new IllegalArgumentException("pid " + pid, e);
        }
    }

    private Map<String, Object> exchange(RdmaConnectionFactory factory, Map<String, Object> args) {
        if (factory == null) {
            throw new IllegalStateException("no factory service for " + args.get("pid"));
        }
        InetSocketAddress service = new InetSocketAddress((String) args.get("address"), (Integer) args.get("port"));
        int messages = (Integer) args.get("messages");
        int size = (Integer) args.get("size");
        Map<String, Object> seen = new LinkedHashMap<>();
        int intact = 0;
        int immediate = 0;
        try (RdmaConnection connection = factory.getConnection();
             RdmaEndpoint endpoint = connection.connect(service, TIMEOUT)) {
            seen.put("device", connection.deviceName());
            seen.put("counters while lent", pool(args).counters().toString());
            for (int i = 0; i < messages; i++) {
                byte[] message = message(i, size);
                WorkRequest echo = endpoint.receive();
                WorkRequest send = endpoint.send(message);
                if (echo.completion().tryWaitForCompletion()) {
                    immediate++;
                } else if (!echo.completion().waitForCompletion(TIMEOUT)) {
                    throw new IllegalStateException("no echo of message " + i + " within " + TIMEOUT);
                }
                if (!send.completion().waitForCompletion(TIMEOUT) || !send.result().isSuccess()) {
                    throw new IllegalStateException("send " + i + " did not complete: " + send.result());
                }
                if (echo.result().isSuccess() && Arrays.equals(message, echo.data())) {
                    intact++;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        seen.put("echoed intact", intact);
        seen.put("echoed at once", immediate);
        seen.put("counters", pool(args).counters().toString());
        return seen;
    }

    /** The pool view of the factory of {@code args}' pid (the same service object). */
    private ConnectionPool pool(Map<String, Object> args) {
        return withService(ConnectionPool.class, (String) args.get("pid"), p -> p);
    }

    /** Message {@code i}: "echo i ", then letters, {@code size} bytes in all. */
    private static byte[] message(int i, int size) {
        byte[] bytes = new byte[size];
        byte[] head = ("echo " + i + " ").getBytes(StandardCharsets.US_ASCII);
        for (int k = 0; k < size; k++) {
            bytes[k] = k < head.length ? head[k] : (byte) ('a' + (i + k) % 26);
        }
        return bytes;
    }

    private static Dictionary<String, Object> dictionary(Map<String, Object> map) {
        return map == null ? new Hashtable<>() : new Hashtable<>(map);
    }
}
