package org.rdmaconnector.connector.spi;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.rdmaconnector.connector.DeviceAttributes;

/**
 * The settings that depend on the device, checked against what it reports ({@code ibv_query_device(3)}'s
 * {@code max_cqe} and {@code max_qp_wr}, the context's {@code num_comp_vectors}) once the device is known, so that
 * a value the device refuses is named with its limit instead of failing as an errno of ibv_create_cq or
 * rdma_create_qp. A pure function: tested on the host with made-up attributes.
 */
final class DeviceLimits {
    private DeviceLimits() {
    }

    /**
     * What the queues of one queue set ask of their device, each number with the settings it comes from.
     *
     * @param cqProperty the property to name for the completion queue's depth
     * @param cqDescription the depth as people should read it, with what it was computed from
     * @param cqDepth entries of the completion queue
     * @param completionVector the completion vector of the queue
     * @param workRequests the work request depths of each queue pair, by property name, in the order to report them
     */
    record Demand(String cqProperty, String cqDescription, long cqDepth, int completionVector,
                  Map<String, Integer> workRequests) {
        Demand {
            workRequests = Collections.unmodifiableMap(new LinkedHashMap<>(workRequests)); // in the order given
        }

        /** A channel set's: CqDepth, CompletionVector, and MaxSendWr and MaxRecvWr of each endpoint. */
        static Demand of(ChannelSettings settings) {
            Map<String, Integer> depths = new LinkedHashMap<>();
            depths.put("MaxSendWr", settings.maxSendWr());
            depths.put("MaxRecvWr", settings.maxRecvWr());
            return new Demand("CqDepth", "CqDepth " + settings.cqDepth(), settings.cqDepth(),
                settings.completionVector(), depths);
        }

        /**
         * A listener's on one device: its completion queue, computed from MaxConnections and ReceiveBufferCount, on
         * vector 0, and ReceiveBufferCount receives and sends per accepted connection.
         */
        static Demand of(ListenerSettings settings) {
            return new Demand("MaxConnections", "the listener's completion queue of " + settings.listenerCqDepth()
                + " entries (MaxConnections " + settings.maxConnections() + " x 2 x ReceiveBufferCount "
                + settings.receiveBufferCount() + ")", settings.listenerCqDepth(), 0,
                Map.of("ReceiveBufferCount", settings.receiveBufferCount()));
        }

        /** A completion queue of {@code cqDepth} entries on {@code completionVector}, with no other settings. */
        static Demand completionQueue(int cqDepth, int completionVector) {
            return new Demand("CqDepth", "a completion queue of " + cqDepth + " entries", cqDepth, completionVector,
                Map.of());
        }
    }

    /**
     * Every part of {@code demand} that device {@code device} does not allow, each naming the property, the value and
     * the device's limit; empty when it fits.
     *
     * @param completionVectors the device's {@code num_comp_vectors}
     */
    static List<SettingProblem> problems(String device, DeviceAttributes attributes, int completionVectors,
                                         Demand demand) {
        List<SettingProblem> problems = new ArrayList<>();
        if (demand.cqDepth() > attributes.maxCqe()) {
            problems.add(new SettingProblem(demand.cqProperty(), demand.cqDescription() + " is more than device "
                + device + " allows (max_cqe " + attributes.maxCqe() + ")"));
        }
        if (demand.completionVector() >= completionVectors) {
            problems.add(new SettingProblem("CompletionVector", "CompletionVector " + demand.completionVector()
                + " is more than device " + device + " allows (num_comp_vectors " + completionVectors
                + ": from 0 to " + (completionVectors - 1) + ")"));
        }
        demand.workRequests().entrySet().forEach(depth -> {
            if (depth.getValue() > attributes.maxQpWr()) {
                problems.add(new SettingProblem(depth.getKey(), depth.getKey() + " " + depth.getValue()
                    + " is more than device " + device + " allows (max_qp_wr " + attributes.maxQpWr() + ")"));
            }
        });
        return problems;
    }
}
