package dev.vgpu.deviceplugin;

import dev.vgpu.attach.Handovers;
import dev.vgpu.core.Device;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.SerialContext;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * What every plugin of one manager shares; owned and closed by the {@link PluginManager}.
 *
 * @param handovers      what a VM needs for a device, and the checks before it is handed over (any thread)
 * @param pluginDir      the device-plugin directory holding {@code kubelet.sock} and the plugin sockets
 * @param snapshots      the snapshot current now (published by the manager's context, read by gRPC threads)
 * @param context        the manager's serial context: the one owner of every plugin's mutable state
 * @param blocking       runs blocking work outside the context (a server's shutdown), which then posts back
 * @param kubelet        the one memory of the kubelet's socket (owned by the context)
 * @param kubeletClient  the one transport for every plugin server and the channels to {@code kubelet.sock}
 * @param backoffInitial first registration retry delay
 * @param backoffMax     cap of the registration retry delay
 * @param gpuFaulty      whether a device's GPU has a fault reported now (XID); asked in the context only
 * @param observer       hears RPC outcomes and registrations, for metrics
 * @param clock          times the RPCs reported to the observer
 */
record PluginEnvironment(Handovers handovers, Path pluginDir, Supplier<Snapshot> snapshots, SerialContext context,
                         Executor blocking, KubeletSocket kubelet, UnixDomainTransport kubeletClient,
                         Duration backoffInitial, Duration backoffMax, Predicate<Device> gpuFaulty,
                         PluginObserver observer, InstantSource clock) {

    PluginEnvironment {
        Objects.requireNonNull(handovers, "handovers");
        Objects.requireNonNull(pluginDir, "pluginDir");
        Objects.requireNonNull(snapshots, "snapshots");
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(blocking, "blocking");
        Objects.requireNonNull(kubelet, "kubelet");
        Objects.requireNonNull(kubeletClient, "kubeletClient");
        Objects.requireNonNull(gpuFaulty, "gpuFaulty");
        Objects.requireNonNull(observer, "observer");
        Objects.requireNonNull(clock, "clock");
        if (backoffInitial.isNegative() || backoffInitial.isZero() || backoffMax.compareTo(backoffInitial) < 0) {
            throw new IllegalArgumentException("registration backoff needs 0 < initial <= max, got " + backoffInitial
                    + " and " + backoffMax);
        }
    }
}
