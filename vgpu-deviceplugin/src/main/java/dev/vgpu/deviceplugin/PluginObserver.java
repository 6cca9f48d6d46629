package dev.vgpu.deviceplugin;

import dev.vgpu.core.ResourceName;
import java.time.Duration;

/**
 * Hears what the device plugins do, for metrics: RPC outcomes, registrations and kubelet restarts. Every method
 * has an empty default; implementations must be thread-safe, return quickly and not throw (gRPC and scheduler
 * threads call them). State that can be read at any time (devices by health, registration) is in
 * {@link PluginManager#status()} instead.
 */
public interface PluginObserver {

    /** An observer that ignores everything. */
    PluginObserver NONE = new PluginObserver() {
    };

    /**
     * One Allocate call finished.
     *
     * @param resource the plugin's resource
     * @param code     the gRPC status code name, {@code OK} on success (e.g. {@code INVALID_ARGUMENT})
     * @param took     how long it took to answer
     */
    default void allocated(ResourceName resource, String code, Duration took) {
    }

    /**
     * One GetPreferredAllocation call finished.
     *
     * @param resource the plugin's resource
     * @param code     the gRPC status code name, {@code OK} on success
     * @param took     how long it took to answer
     */
    default void preferredAllocation(ResourceName resource, String code, Duration took) {
    }

    /**
     * A resource registered with the kubelet (the first time, or again after a kubelet restart).
     *
     * @param resource the resource
     */
    default void registered(ResourceName resource) {
    }

    /** A new kubelet registration socket appeared after another had been seen: the kubelet restarted. */
    default void kubeletRestarted() {
    }
}
