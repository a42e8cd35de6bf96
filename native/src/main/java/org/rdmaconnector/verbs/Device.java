package org.rdmaconnector.verbs;

import org.rdmaconnector.verbs.jna.IbVerbs;
import org.rdmaconnector.verbs.jna.Mem;

/**
 * An RDMA device as libibverbs lists it ({@code struct ibv_device}, ibv_get_device_list(3)): its name (e.g.
 * {@code rxe0}, {@code mlx5_0}), node GUID and kernel index. Holds no native memory; {@link #open()} opens it.
 *
 * <p>Equal records are the same registration of the same device. A device removed and added again is a new device:
 * the kernel gives it a new index, even where name and GUID come back the same (Soft-RoCE derives its GUID from the
 * network interface's MAC address).
 *
 * @param name the kernel name of the device
 * @param guid the node GUID, in host order
 * @param index the kernel's index of this registration of the device (ibv_get_device_index(3)), -1 where the kernel
 *     cannot tell it
 */
public record Device(String name, long guid, int index) {
    /** The device {@code device} (a {@code struct ibv_device *}) names now. */
    static Device of(long device) {
        return new Device(Mem.string(IbVerbs.ibv_get_device_name(device)),
            Long.reverseBytes(IbVerbs.ibv_get_device_guid(device)), IbVerbs.ibv_get_device_index(device));
    }

    /**
     * Opens a verbs context on this device, shared with librdmacm so that its protection domains, completion queues
     * and memory regions can be used with {@link CmId}s (see {@link DeviceContext#open(String)}).
     */
    public DeviceContext open() {
        return DeviceContext.open(name);
    }

    @Override
    public String toString() {
        return name + " (guid " + String.format("%016x", guid) + ", index " + index + ")";
    }
}
