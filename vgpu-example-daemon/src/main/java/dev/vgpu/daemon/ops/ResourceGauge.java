package dev.vgpu.daemon.ops;

import java.util.Objects;

/**
 * What the per-resource gauges say of one resource at scrape time ({@code vgpu_devices},
 * {@code vgpu_resource_registered}, {@code vgpu_resource_serving}), whichever way the node offers it.
 *
 * @param resource   the full resource name, {@code nvidia.com/...}
 * @param healthy    its healthy devices
 * @param unhealthy  its unhealthy devices
 * @param registered whether the kubelet accepted it (the device plugin's registration, or the DRA plugin's)
 * @param serving    whether it is served on its socket
 */
public record ResourceGauge(String resource, int healthy, int unhealthy, boolean registered, boolean serving) {

    /** Checks the name and the counts. */
    public ResourceGauge {
        Objects.requireNonNull(resource, "resource");
        if (healthy < 0 || unhealthy < 0) {
            throw new IllegalArgumentException("negative device count for " + resource);
        }
    }
}
