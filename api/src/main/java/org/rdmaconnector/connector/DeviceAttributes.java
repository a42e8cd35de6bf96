package org.rdmaconnector.connector;

/**
 * What {@code ibv_query_device(3)} reports ({@code struct ibv_device_attr}), the fields applications size things by.
 *
 * @param firmwareVersion fw_ver
 * @param nodeGuid node_guid, host order
 * @param maxMrSize largest registrable region in bytes
 * @param vendorId vendor_id
 * @param vendorPartId vendor_part_id
 * @param hardwareVersion hw_ver
 * @param maxQp queue pairs
 * @param maxQpWr work requests per queue
 * @param maxSge scatter/gather entries per work request
 * @param maxCq completion queues
 * @param maxCqe entries per completion queue
 * @param maxMr memory regions
 * @param maxPd protection domains
 * @param physicalPortCount ports, numbered from 1
 */
public record DeviceAttributes(String firmwareVersion, long nodeGuid, long maxMrSize, int vendorId, int vendorPartId,
                               int hardwareVersion, int maxQp, int maxQpWr, int maxSge, int maxCq, int maxCqe,
                               int maxMr, int maxPd, int physicalPortCount) {
}
