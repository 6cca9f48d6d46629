package dev.vgpu.kubelet.standin;

import java.util.Objects;
import java.util.OptionalInt;

/**
 * One device as the stand-in kubelet last received it on a ListAndWatch stream.
 *
 * @param id       the device id (BDF or UUID)
 * @param health   {@code Healthy} or {@code Unhealthy}, as sent
 * @param numaNode the first NUMA node of its topology, empty when the plugin sent none
 */
public record DeviceState(String id, String health, OptionalInt numaNode) {

    /** Validates that nothing is null. */
    public DeviceState {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(health, "health");
        Objects.requireNonNull(numaNode, "numaNode");
    }

    /** True when the plugin said {@code Healthy}. */
    public boolean healthy() {
        return "Healthy".equals(health);
    }
}
