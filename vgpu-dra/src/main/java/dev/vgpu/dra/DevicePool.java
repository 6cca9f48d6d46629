package dev.vgpu.dra;

import dev.vgpu.core.Snapshot;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The node's devices and their health as the plugin's owner holds them at one moment: what the ResourceSlice
 * publisher turns into slices (an unhealthy device tainted), handed as a plain value whenever either changes.
 *
 * @param snapshot the devices
 * @param verdicts each unhealthy device's id with why; empty before the plugin's first health check, so that a
 *                 publisher keeps the taints it finds rather than calling an unchecked device healthy
 */
public record DevicePool(Snapshot snapshot, Optional<Map<String, String>> verdicts) {

    /** Copies the verdicts. */
    public DevicePool {
        Objects.requireNonNull(snapshot, "snapshot");
        verdicts = verdicts.map(Map::copyOf);
    }

    /** The ids of the devices found unhealthy; empty before the first check too. */
    public Set<String> unhealthyIds() {
        return verdicts.map(Map::keySet).orElse(Set.of());
    }

    /** Whether the devices were checked at least once. */
    public boolean checked() {
        return verdicts.isPresent();
    }
}
