package dev.vgpu.deviceplugin;

import dev.vgpu.core.Device;
import dev.vgpu.core.internal.Guarded;
import dev.vgpu.core.internal.SerialContext;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.kubelet.api.transport.DirectoryWatch;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.function.Supplier;

/**
 * Checks every plugin: periodically, and at once when a watched directory (the device-plugin directory,
 * {@code /dev/vfio} under the host root) changes. A change in the device-plugin directory (the kubelet's socket, a
 * plugin's socket, among them the daemon's own new ones at registration) checks the sockets only; one in
 * {@code /dev/vfio}, the periodic round and {@link #request()} check the devices too (group nodes, re-checks): the
 * sockets say nothing about the devices, and re-reading every device while new resources register took a third of
 * the registration's time (BENCHMARKS.md, "Start-up"). A round starts in the manager's context (which plugins, which
 * devices), reads the file system outside it on the check lane (the kubelet's socket, each plugin's socket, group
 * nodes, the sources' re-checks), and posts what it read back to the context, where the kubelet's memory and the
 * plugins act on it (docs/ARCHITECTURE.md, "Where a kubelet restart happens").
 *
 * <p>Threads: {@code reading}, {@code again} and {@code againDevices} are owned by the context; one round reads at a
 * time, and requests during a round fold into one more round after it, which checks the devices when any of them
 * asked to. The watch thread only posts to the context.
 */
final class PluginChecks implements AutoCloseable {

    private final PluginEnvironment env;
    private final Supplier<Collection<ResourcePlugin>> plugins;
    private final SerialContext lane;
    private final Path devicePluginDir;
    private final DirectoryWatch watcher;
    private final Future<?> periodic;
    private boolean reading;
    private boolean again;
    private boolean againDevices;

    /**
     * Starts watching and the periodic checks.
     *
     * @param plugins         the plugins now; asked in the context only
     * @param lane            runs the reads outside the context, one round at a time
     * @param devicePluginDir the watched directory whose changes concern the sockets only
     * @param threads         makes the directory watch's thread
     * @throws IOException when no watch service can be made
     */
    PluginChecks(PluginEnvironment env, Supplier<Collection<ResourcePlugin>> plugins, SerialContext lane,
                 Path devicePluginDir, List<Path> watched, long pollNanos, ThreadFactory threads) throws IOException {
        this.env = env;
        this.plugins = plugins;
        this.lane = lane;
        this.devicePluginDir = devicePluginDir;
        this.watcher = new DirectoryWatch(watched, this::changed, threads, "vgpu-dp-watch",
                e -> Guarded.report("directory watch", e)).start();
        this.periodic = env.context().every(() -> round(true), pollNanos);
    }

    /** Asks for one whole check round (sockets and devices) soon; any thread, never blocks. */
    void request() {
        env.context().execute(() -> round(true));
    }

    /** A watched directory changed (on the watch thread): a round soon, of the devices too but for the plugins'. */
    private void changed(Path directory) {
        boolean devices = !directory.equals(devicePluginDir);
        env.context().execute(() -> round(devices));
    }

    /** In the context: starts a round, or folds into the one reading now. */
    private void round(boolean devices) {
        if (reading) {
            again = true;
            againDevices |= devices;
            return;
        }
        reading = true;
        List<ResourcePlugin.Probe> probes = plugins.get().stream().map(ResourcePlugin::probe).toList();
        long looksBefore = env.kubelet().looks();
        lane.execute(() -> {
            try {
                watcher.ensureWatching();
                Optional<KubeletSocket.Identity> kubelet = KubeletSocket.read(env.kubelet().path());
                List<ResourcePlugin.Checked> read = probes.stream().map(probe -> read(probe, devices)).toList();
                env.context().execute(() -> finish(kubelet, looksBefore, read));
            } catch (RuntimeException | LinkageError e) {
                env.context().execute(this::done);
                throw e;
            }
        });
    }

    /**
     * The blocking half of a check, outside the context: the plugin socket's key and, when {@code devices}, the group
     * nodes and each device's source asked whether it is still what was advertised.
     */
    private ResourcePlugin.Checked read(ResourcePlugin.Probe probe, boolean devices) {
        Object socketKey = probe.socket().map(UnixDomainTransport::socketKey).orElse(null);
        if (!devices) {
            return new ResourcePlugin.Checked(probe.plugin(), probe.served(), socketKey, false, Map.of(), Map.of());
        }
        Map<String, Boolean> groupNodes = new HashMap<>();
        Map<String, String> identityChanges = new HashMap<>();
        for (Device device : probe.devices()) {
            device.iommuGroup().ifPresent(g -> groupNodes.computeIfAbsent(g, env.handovers()::groupNodePresent));
            DeviceCheck check = env.handovers().recheck(device);
            identityChanges.put(device.id(), check.unchanged() ? "" : check.describe(device.id()));
        }
        return new ResourcePlugin.Checked(probe.plugin(), probe.served(), socketKey, true, groupNodes,
                identityChanges);
    }

    /** In the context: what the round read reaches the kubelet's memory and the plugins. */
    private void finish(Optional<KubeletSocket.Identity> kubeletNow, long looksBefore,
                        List<ResourcePlugin.Checked> read) {
        try {
            int kubelet = env.kubelet().seenSince(kubeletNow, looksBefore);
            for (ResourcePlugin.Checked checked : read) {
                checked.plugin().checked(checked, kubelet);
            }
        } finally {
            done();
        }
    }

    private void done() {
        reading = false;
        if (again) {
            boolean devices = againDevices;
            again = false;
            againDevices = false;
            round(devices);
        }
    }

    /** Stops the periodic checks and the watch (ending its thread). */
    @Override
    public void close() {
        periodic.cancel(false);
        watcher.close();
    }
}
