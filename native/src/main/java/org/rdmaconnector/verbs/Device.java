package org.rdmaconnector.verbs;

/**
 * An RDMA device as libibverbs lists it ({@code struct ibv_device}, ibv_get_device_list(3)): its name (e.g.
 * {@code rxe0}, {@code mlx5_0}) and node GUID. Holds no native memory; {@link #open()} opens it.
 *
 * @param name the kernel name of the device
 * @param guid the node GUID, in host order
 */
public record Device(String name, long guid) {
    /**
     * Opens a verbs context on this device, shared with librdmacm so that its protection domains, completion queues
     * and memory regions can be used with {@link CmId}s (see {@link DeviceContext#open(String)}).
     */
    public DeviceContext open() {
        return DeviceContext.open(name);
    }

    @Override
    public String toString() {
        return name + " (guid " + String.format("%016x", guid) + ")";
    }
}
