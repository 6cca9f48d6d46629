package dev.vgpu.attach;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The answer of {@link Handovers}: what a VM needs for the devices, or why they must not be handed over.
 * <pre>{@code
 * Handover answer = handovers.check(snapshot, resource, ids, VfioNodes.IOMMUFD_WHEN_PRESENT);
 * if (answer instanceof Handover.Granted granted) {
 *     granted.nodes().forEach(node -> mount(node.path()));
 * } else if (answer instanceof Handover.Refused refused) {
 *     throw invalid(refused.reason());
 * }
 * }</pre>
 */
public sealed interface Handover permits Handover.Granted, Handover.Refused {

    /**
     * The devices may be handed over.
     *
     * @param devices every device, in request order, without duplicates, each with its own nodes
     * @param nodes   every node the VM needs for all of them together, without duplicates, in the order KubeVirt
     *                is given them: {@code /dev/vfio/vfio}, {@code /dev/iommu} (iommufd), the group nodes, the
     *                cdevs, then the EGM nodes
     * @param env     what KubeVirt's device-plugin path reads (docs/HOST-FACTS.md §2.4): per resource, the
     *                variable {@code PCI_RESOURCE_…} or {@code MDEV_PCI_RESOURCE_…} with the ids comma-joined in
     *                request order; iteration follows the request
     */
    record Granted(List<HandedDevice> devices, List<DeviceNode> nodes, Map<String, String> env) implements Handover {
        /** Copies the collections, keeping the env's order. */
        public Granted {
            devices = List.copyOf(devices);
            nodes = List.copyOf(nodes);
            env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
        }
    }

    /**
     * The devices must not be handed over; nothing was changed on the host.
     *
     * @param reason one sentence naming the device and what is wrong (unknown, not advertised, moved to another
     *               IOMMU group, no longer what was advertised); client text in it is escaped and cut
     */
    record Refused(String reason) implements Handover {
        /** Checks that there is a reason. */
        public Refused {
            Objects.requireNonNull(reason, "reason");
        }
    }
}
