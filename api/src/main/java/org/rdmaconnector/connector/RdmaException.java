package org.rdmaconnector.connector;

/**
 * A call into librdmacm or libibverbs failed. Carries the C function, the errno and its symbolic name, and a sentence
 * a person can act on: {@code rdma_create_event_channel failed: ENODEV (19): no RDMA device is present on this machine}.
 * Bad arguments are not RDMA errors: they throw {@link IllegalArgumentException}.
 */
public class RdmaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String function;
    private final int errno;
    private final String errnoName;

    /**
     * An error of {@code function} with {@code errno} (named {@code errnoName}, e.g. ENODEV); the message reads
     * {@code function failed: ERRNONAME (errno): explanation}.
     */
    public RdmaException(String function, int errno, String errnoName, String explanation) {
        super(function + " failed: " + errnoName + " (" + errno + "): " + explanation);
        this.function = function;
        this.errno = errno;
        this.errnoName = errnoName;
    }

    /**
     * {@code cause} as a larger step saw it: the same function and errno, the message {@code step + ": "} and the
     * cause's, e.g. {@code cannot open RDMA channels on device mlx5_0: rdma_get_devices failed: ENODEV (19): ...}.
     */
    public RdmaException(String step, RdmaException cause) {
        super(step + ": " + cause.getMessage(), cause);
        this.function = cause.function;
        this.errno = cause.errno;
        this.errnoName = cause.errnoName;
    }

    /** The C function that failed, e.g. {@code rdma_create_event_channel}. */
    public String function() {
        return function;
    }

    /** The errno it reported. */
    public int errno() {
        return errno;
    }

    /** The symbolic name of {@link #errno()}, e.g. {@code ENODEV}. */
    public String errnoName() {
        return errnoName;
    }
}
