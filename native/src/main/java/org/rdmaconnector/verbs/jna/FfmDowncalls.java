package org.rdmaconnector.verbs.jna;

import com.sun.jna.Native;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;

/**
 * Downcall handles of the JDK's foreign function API ({@code java.lang.foreign}, final in Java 22) for the shapes
 * of the inline verbs, built by reflection so that this class compiles for, and loads on, Java 17, where
 * {@link #unavailabilityCause()} says why there are none.
 *
 * <p>{@link #POLL_CQ} has the type {@code (Object function, Object callState, arguments...)int}: the function
 * (the provider's entry in {@code ibv_context->ops}, as {@link #function(long)} made it once: a segment made per call
 * would be an allocation per call), this thread's errno capture ({@link #callState()}), then the C arguments,
 * pointers as {@code long} (a pointer and a {@code long} go in the same 64-bit general-purpose register on every
 * 64-bit Linux ABI the bindings support; the handles are refused where an address is not 8 bytes). No argument is
 * boxed: held in {@code static final} fields and called with {@code invokeExact}, the JIT compiles them to a direct
 * call. For {@code poll_cq} errno is captured after each call ({@code Linker.Option.captureCallState}) and, after a
 * failure, handed to JNA ({@link #keepErrno}), so {@link Mem#errno()} means the same on both paths.
 */
public final class FfmDowncalls {
    /** {@code int poll_cq(struct ibv_cq *, int, struct ibv_wc *)}, critical: never blocks, no thread transition. */
    static final MethodHandle POLL_CQ;
    /**
     * {@code int req_notify_cq(struct ibv_cq *, int)}: a system call on some providers (rxe). Type
     * {@code (Object function, arguments...)int}: it returns the errno itself, so none is captured (a capture costs
     * an allocation per call in the JDK).
     */
    static final MethodHandle REQ_NOTIFY_CQ;
    /**
     * {@code int post_send/post_recv(struct ibv_qp *, struct ibv_*_wr *, struct ibv_*_wr **)}: may run a system call.
     * Type {@code (Object function, arguments...)int}: it returns the errno itself, so none is captured.
     */
    static final MethodHandle POST;
    private static final Throwable UNAVAILABILITY_CAUSE;
    private static final Foreign FOREIGN;
    // the value is a MemorySegment, a class of the JDK: a server thread that outlives a deployment keeps nothing of it
    private static final ThreadLocal<Object> CALL_STATE = new ThreadLocal<>();

    static {
        Foreign foreign = null;
        MethodHandle pollCq = null;
        MethodHandle reqNotifyCq = null;
        MethodHandle post = null;
        Throwable cause = null;
        try {
            foreign = new Foreign();
            pollCq = foreign.downcall(true, true, long.class, int.class, long.class);
            reqNotifyCq = foreign.downcall(false, false, long.class, int.class);
            post = foreign.downcall(false, false, long.class, long.class, long.class);
        } catch (InvocationTargetException e) {
            cause = e.getCause();
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            cause = e;
        }
        UNAVAILABILITY_CAUSE = cause;
        FOREIGN = cause == null ? foreign : null;
        POLL_CQ = cause == null ? pollCq : null;
        REQ_NOTIFY_CQ = cause == null ? reqNotifyCq : null;
        POST = cause == null ? post : null;
    }

    private FfmDowncalls() {
    }

    /** Why there are no handles (a Java before 22, or a failure building them), or null when there are. */
    public static Throwable unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    /** The function at {@code address} as the handles take it (a {@code MemorySegment}): make it once, keep it. */
    public static Object function(long address) {
        ensureAvailable();
        try {
            return FOREIGN.ofAddress.invoke(address);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /**
     * A new handle of type {@code (Object function, Object callState, parameterTypes...)int}, as the verbs' own; for
     * benchmarks that compare the options. Keep it in a {@code static final} field.
     *
     * @param critical whether the call is made without a thread state transition ({@code Linker.Option.critical}):
     *     only for functions that are short and never block
     * @param parameterTypes {@code int.class} or {@code long.class} (a pointer) each
     */
    public static MethodHandle downcall(boolean critical, Class<?>... parameterTypes) {
        ensureAvailable();
        try {
            return FOREIGN.downcall(critical, true, parameterTypes);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("cannot build a downcall handle", e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot build a downcall handle", e);
        }
    }

    /** This thread's errno capture, made on its first call; the second argument of every handle. */
    public static Object callState() {
        Object state = CALL_STATE.get();
        if (state == null) {
            ensureAvailable();
            state = FOREIGN.newCallState();
            CALL_STATE.set(state);
        }
        return state;
    }

    /**
     * The JDK's accessors of native memory at raw addresses, through a segment spanning the address space (a
     * restricted method, as the downcalls): getters {@code (long address)T} of {@code long}, {@code int},
     * {@code short} and {@code byte}, then setters {@code (long address, T value)void} of the same, in native byte
     * order, any alignment. Keep each in a {@code static final} field: the JIT then compiles a call to a plain load or
     * store, where JNA's {@code Pointer} makes a JNI call per access.
     */
    static MethodHandle[] memoryAccessors() {
        ensureAvailable();
        try {
            return FOREIGN.memoryAccessors();
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("cannot build the memory accessors", e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot build the memory accessors", e);
        }
    }

    /** Returns {@code rc}; when it is negative (a failure that may leave errno), first gives JNA the captured errno. */
    public static int keepErrno(int rc, Object callState) {
        if (rc < 0) {
            Native.setLastError(FOREIGN.errno(callState));
        }
        return rc;
    }

    /** What a handle threw, as an unchecked exception: downcalls throw nothing checked. */
    static RuntimeException unexpected(Throwable t) {
        if (t instanceof RuntimeException) {
            return (RuntimeException) t;
        }
        if (t instanceof Error) {
            throw (Error) t;
        }
        return new IllegalStateException("downcall failed", t);
    }

    private static void ensureAvailable() {
        if (UNAVAILABILITY_CAUSE != null) {
            throw new IllegalStateException("FFM downcall handles are unavailable: " + UNAVAILABILITY_CAUSE,
                UNAVAILABILITY_CAUSE);
        }
    }

    /** The reflective view of {@code java.lang.foreign} that builds the handles. */
    private static final class Foreign {
        private static final int FIRST_FINAL_RELEASE = 22;
        private final Class<?> memorySegment = type("MemorySegment");
        private final Class<?> memoryLayout = type("MemoryLayout");
        private final Class<?> valueLayout = type("ValueLayout");
        private final Class<?> functionDescriptor = type("FunctionDescriptor");
        private final Class<?> linkerType = type("Linker");
        private final Class<?> option = type("Linker$Option");
        private final Class<?> arena = type("Arena");
        private final Object linker;
        private final Object javaInt;
        private final Object javaLong;
        private final Object captureErrno;
        private final Object critical;
        private final Object callStateLayout;
        private final MethodHandle ofAddress;
        private final MethodHandle errno;

        Foreign() throws ReflectiveOperationException {
            linker = linkerType.getMethod("nativeLinker").invoke(null);
            javaInt = valueLayout.getField("JAVA_INT").get(null);
            javaLong = valueLayout.getField("JAVA_LONG").get(null);
            Object address = valueLayout.getField("ADDRESS").get(null);
            long addressSize = (long) memoryLayout.getMethod("byteSize").invoke(address);
            if (addressSize != Long.BYTES) {
                throw new UnsupportedOperationException("an address is " + addressSize + " bytes on " + Layout.ARCH
                    + "; the handles pass pointers as 8-byte longs");
            }
            captureErrno = option.getMethod("captureCallState", String[].class)
                .invoke(null, (Object) new String[] {"errno"});
            critical = option.getMethod("critical", boolean.class).invoke(null, false);
            callStateLayout = option.getMethod("captureStateLayout").invoke(null);
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            ofAddress = lookup.findStatic(memorySegment, "ofAddress", MethodType.methodType(memorySegment, long.class));
            // errno's offset in the capture, by name: the layout is the platform's
            Class<?> pathElement = type("MemoryLayout$PathElement");
            Object errnoPath = Array.newInstance(pathElement, 1);
            Array.set(errnoPath, 0, pathElement.getMethod("groupElement", String.class).invoke(null, "errno"));
            long errnoOffset = (long) memoryLayout.getMethod("byteOffset", errnoPath.getClass())
                .invoke(callStateLayout, errnoPath);
            Class<?> ofInt = type("ValueLayout$OfInt");
            errno = MethodHandles.insertArguments(
                    lookup.findVirtual(memorySegment, "get", MethodType.methodType(int.class, ofInt, long.class)),
                    1, javaInt, errnoOffset)
                .asType(MethodType.methodType(int.class, Object.class));
        }

        private static Class<?> type(String name) {
            int feature = Runtime.version().feature();
            if (feature < FIRST_FINAL_RELEASE) {
                throw new UnsupportedOperationException("java.lang.foreign is final from Java " + FIRST_FINAL_RELEASE
                    + "; this is Java " + feature);
            }
            try {
                return Class.forName("java.lang.foreign." + name);
            } catch (ClassNotFoundException e) {
                throw new UnsupportedOperationException("java.lang.foreign." + name + " is missing from Java "
                    + Runtime.version(), e);
            }
        }

        /** {@code (Object function, [Object callState,] parameterTypes...)int}; the call state when {@code capture}. */
        MethodHandle downcall(boolean isCritical, boolean capture, Class<?>... parameterTypes)
            throws ReflectiveOperationException {
            Object layouts = Array.newInstance(memoryLayout, parameterTypes.length);
            for (int i = 0; i < parameterTypes.length; i++) {
                Array.set(layouts, i, layoutOf(parameterTypes[i]));
            }
            Object descriptor = functionDescriptor.getMethod("of", memoryLayout, layouts.getClass())
                .invoke(null, javaInt, layouts);
            Object options = Array.newInstance(option, (isCritical ? 1 : 0) + (capture ? 1 : 0));
            if (capture) {
                Array.set(options, 0, captureErrno);
            }
            if (isCritical) {
                Array.set(options, capture ? 1 : 0, critical);
            }
            // (MemorySegment function, [MemorySegment callState,] arguments...)int: a restricted method (see README)
            MethodHandle handle = (MethodHandle) linkerType
                .getMethod("downcallHandle", functionDescriptor, options.getClass())
                .invoke(linker, descriptor, options);
            MethodType type = handle.type().changeParameterType(0, Object.class);
            return handle.asType(capture ? type.changeParameterType(1, Object.class) : type);
        }

        private Object layoutOf(Class<?> type) {
            if (type == int.class) {
                return javaInt;
            }
            if (type == long.class) {
                return javaLong;
            }
            throw new IllegalArgumentException("parameter type " + type + " is neither int nor long (a pointer)");
        }

        MethodHandle[] memoryAccessors() throws ReflectiveOperationException {
            Object nothing = memorySegment.getField("NULL").get(null);
            Object everything = memorySegment.getMethod("reinterpret", long.class).invoke(nothing, Long.MAX_VALUE);
            String[] layouts = {"JAVA_LONG_UNALIGNED", "JAVA_INT_UNALIGNED", "JAVA_SHORT_UNALIGNED", "JAVA_BYTE"};
            MethodHandle[] accessors = new MethodHandle[2 * layouts.length];
            for (int i = 0; i < layouts.length; i++) {
                Object layout = valueLayout.getField(layouts[i]).get(null);
                // coordinates (MemorySegment, long offset): the offset in the segment from address 0 is the address
                VarHandle access = (VarHandle) valueLayout.getMethod("varHandle").invoke(layout);
                accessors[i] = MethodHandles.insertArguments(access.toMethodHandle(VarHandle.AccessMode.GET), 0,
                    everything);
                accessors[layouts.length + i] = MethodHandles.insertArguments(
                    access.toMethodHandle(VarHandle.AccessMode.SET), 0, everything);
            }
            return accessors;
        }

        Object newCallState() {
            try {
                Object auto = arena.getMethod("ofAuto").invoke(null); // freed once the segment is unreachable
                return arena.getMethod("allocate", memoryLayout).invoke(auto, callStateLayout);
            } catch (InvocationTargetException e) {
                throw unexpected(e.getCause());
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot allocate the errno capture", e);
            }
        }

        int errno(Object callState) {
            try {
                return (int) errno.invokeExact(callState);
            } catch (Throwable t) {
                throw unexpected(t);
            }
        }
    }
}
