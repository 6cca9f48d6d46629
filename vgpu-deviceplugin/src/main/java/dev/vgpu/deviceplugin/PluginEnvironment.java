package dev.vgpu.deviceplugin;

import dev.vgpu.attach.Handovers;
import dev.vgpu.core.Device;
import dev.vgpu.core.Snapshot;
import dev.vgpu.deviceplugin.transport.UnixDomainTransport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * What every plugin of one manager shares; owned and closed by the {@link PluginManager}.
 *
 * @param handovers      the checks and answers of Allocate, group-node presence and identity re-checks for health
 * @param pluginDir      the device-plugin directory holding {@code kubelet.sock} and the plugin sockets
 * @param snapshots      the snapshot current now (one atomic reference in the manager)
 * @param scheduler      runs registration attempts, backoff timers and health checks
 * @param kubeletClient  the one transport for every plugin server and the channels to {@code kubelet.sock}
 * @param backoffInitial first registration retry delay
 * @param backoffMax     cap of the registration retry delay
 * @param gpuFaulty      whether a device's GPU has a fault reported now (XID)
 * @param observer       hears RPC outcomes and registrations, for metrics
 */
record PluginEnvironment(Handovers handovers, Path pluginDir, Supplier<Snapshot> snapshots,
                         ScheduledExecutorService scheduler, UnixDomainTransport kubeletClient,
                         Duration backoffInitial, Duration backoffMax, Predicate<Device> gpuFaulty,
                         PluginObserver observer) {

    /** The file name of the kubelet's registration socket. */
    static final String KUBELET_SOCKET = "kubelet.sock";

    PluginEnvironment {
        Objects.requireNonNull(handovers, "handovers");
        Objects.requireNonNull(pluginDir, "pluginDir");
        Objects.requireNonNull(snapshots, "snapshots");
        Objects.requireNonNull(scheduler, "scheduler");
        Objects.requireNonNull(kubeletClient, "kubeletClient");
        Objects.requireNonNull(gpuFaulty, "gpuFaulty");
        Objects.requireNonNull(observer, "observer");
        if (backoffInitial.isNegative() || backoffInitial.isZero() || backoffMax.compareTo(backoffInitial) < 0) {
            throw new IllegalArgumentException("registration backoff needs 0 < initial <= max, got " + backoffInitial
                    + " and " + backoffMax);
        }
    }

    /** {@code <pluginDir>/kubelet.sock}. */
    Path kubeletSocket() {
        return pluginDir.resolve(KUBELET_SOCKET);
    }
}
