package org.rdmaconnector.verbs.jna;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Structure;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The registration of the direct-mapped bindings ({@link LibC}, {@link IbVerbs}, {@link RdmaCma}) with JNA, for a
 * container that unloads our classes (an undeployed resource adapter). JNA keeps every registered library, and a
 * registered library keeps JNA's cleaner thread running; that thread's class comes from the class loader of the JNA
 * we ship, so while anything is registered the loader, with every class it loaded, can never be collected. The last
 * {@link #release()} unregisters them; JNA's cleaner thread then ends on its own (30 s after its last use).
 * {@link #retain()} also clears what JNA's initialization leaves in the calling thread's thread-locals.
 * Thread-safe.
 */
public final class Bindings {
    private static final System.Logger LOG = System.getLogger(Bindings.class.getName());
    // in registration order: libc first; what release() unregistered, to register again on the next retain()
    private static final Map<Class<?>, String> LIBRARIES = new LinkedHashMap<>();
    private static final Map<Class<?>, String> UNREGISTERED = new LinkedHashMap<>();
    private static int users;

    static {
        LIBRARIES.put(LibC.class, "c");
        LIBRARIES.put(IbVerbs.class, IbVerbs.LIBRARY);
        LIBRARIES.put(RdmaCma.class, RdmaCma.LIBRARY);
    }

    private Bindings() {
    }

    /**
     * A user begins (a resource adapter starts): binds the libraries now, on this thread (again, if a previous
     * {@link #release()} let them go), then removes the values JNA's own thread-locals were given while it
     * initialized. Those are of JNA's classes: left on a server thread that outlives the deployment, they would keep
     * its class loader.
     */
    public static synchronized void retain() {
        for (Map.Entry<Class<?>, String> entry : UNREGISTERED.entrySet()) {
            Native.register(entry.getKey(), NativeLibrary.getInstance(entry.getValue()));
        }
        UNREGISTERED.clear();
        // initializes the bindings (their failure, e.g. no libibverbs, is recorded there and reported on use)
        RdmaCma.unavailabilityCause();
        forgetThreadLocals(Structure.class);
        forgetThreadLocals(Native.class);
        users++;
    }

    // JNA's Structure keeps per-thread bookkeeping (a set of JNA's own class) from its first use on a thread; JNA
    // uses one Structure itself, while it initializes. Removes this thread's values of the static thread-locals.
    private static void forgetThreadLocals(Class<?> type) {
        for (Field field : type.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) && ThreadLocal.class.isAssignableFrom(field.getType())) {
                try {
                    field.setAccessible(true);
                    ((ThreadLocal<?>) field.get(null)).remove();
                } catch (ReflectiveOperationException | RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "cannot remove " + type.getName() + "." + field.getName()
                        + " of this thread (" + e + "); the thread keeps JNA's class loader until it ends");
                }
            }
        }
    }

    /**
     * A user ends (a resource adapter stopped, with all its native resources closed). The last one unregisters the
     * bindings from JNA: until the next {@link #retain()}, a call into them throws {@link UnsatisfiedLinkError}.
     */
    public static synchronized void release() {
        if (users == 0) {
            throw new IllegalStateException("Bindings.release() without a retain()");
        }
        if (--users > 0) {
            return;
        }
        for (Class<?> binding : LIBRARIES.keySet()) {
            if (Native.registered(binding)) {
                Native.unregister(binding);
                UNREGISTERED.put(binding, LIBRARIES.get(binding));
            }
        }
        LOG.log(System.Logger.Level.DEBUG, "unregistered " + UNREGISTERED.keySet() + " from JNA");
    }
}
