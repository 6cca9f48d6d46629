package dev.vgpu.attach;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One device's runtime health as both adapters judge it (docs/ARCHITECTURE.md, "Attachment knowledge"): the three
 * signals that can make an advertised device unhealthy, and the words that say why. The device plugin keeps one per
 * advertised device; the DRA plugin makes one per device and check. Immutable.
 *
 * @param groupNodePresent whether {@code /dev/vfio/<group>} exists under the host root (true for a device without a
 *                         group)
 * @param gpuFault         whether its GPU reported a fault that covers it ({@link GpuFaults#faulty})
 * @param identityChange   what changed since it was advertised, as {@code DeviceCheck.describe} says it; empty when
 *                         nothing did
 */
public record DeviceHealth(boolean groupNodePresent, boolean gpuFault, String identityChange) {

    /** A device with none of the three problems. */
    public static final DeviceHealth HEALTHY = new DeviceHealth(true, false, "");

    /** Checks the identity change is there (empty for none). */
    public DeviceHealth {
        Objects.requireNonNull(identityChange, "identityChange");
    }

    /** Whether none of the three signals says otherwise. */
    public boolean healthy() {
        return groupNodePresent && !gpuFault && identityChange.isEmpty();
    }

    /**
     * Why the device is unhealthy, in words for a log line or a health message: {@code /dev/vfio/41 is gone},
     * {@code its GPU reported a critical XID}, or what its source says changed; every one that holds, joined by
     * "; ", in that order. {@code healthy} for a healthy device.
     *
     * @param group the device's IOMMU group, when it has one
     */
    public String why(Optional<String> group) {
        List<String> reasons = new ArrayList<>(3);
        if (!groupNodePresent) {
            reasons.add(group.map(g -> "/dev/vfio/" + g).orElse("its VFIO group node") + " is gone");
        }
        if (gpuFault) {
            reasons.add("its GPU reported a critical XID");
        }
        if (!identityChange.isEmpty()) {
            reasons.add(identityChange);
        }
        return reasons.isEmpty() ? "healthy" : String.join("; ", reasons);
    }

    /** The same with the group node as found now. */
    public DeviceHealth withGroupNodePresent(boolean present) {
        return new DeviceHealth(present, gpuFault, identityChange);
    }

    /** The same with the GPU fault as known now. */
    public DeviceHealth withGpuFault(boolean faulty) {
        return new DeviceHealth(groupNodePresent, faulty, identityChange);
    }

    /** The same with what changed since it was advertised ({@code ""}: nothing). */
    public DeviceHealth withIdentityChange(String change) {
        return new DeviceHealth(groupNodePresent, gpuFault, change);
    }
}
