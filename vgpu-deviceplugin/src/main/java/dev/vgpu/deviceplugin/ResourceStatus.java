package dev.vgpu.deviceplugin;

import dev.vgpu.core.ResourceName;
import java.util.Objects;

/**
 * What one resource's plugin is doing now, as {@link PluginManager#status()} reports it.
 *
 * @param name       the resource
 * @param healthy    devices advertised as healthy
 * @param unhealthy  devices advertised as unhealthy
 * @param registered whether its last registration with the kubelet succeeded and still holds
 * @param serving    whether its gRPC server is up on its socket (false while binding fails and is retried)
 */
public record ResourceStatus(ResourceName name, int healthy, int unhealthy, boolean registered, boolean serving) {

    /** Validates. */
    public ResourceStatus {
        Objects.requireNonNull(name, "name");
        if (healthy < 0 || unhealthy < 0) {
            throw new IllegalArgumentException("device counts must not be negative");
        }
    }
}
