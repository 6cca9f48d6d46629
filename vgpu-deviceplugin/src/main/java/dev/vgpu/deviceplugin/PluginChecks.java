package dev.vgpu.deviceplugin;

import dev.vgpu.core.Device;
import dev.vgpu.core.spi.DeviceCheck;
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
 * {@code /dev/vfio} under the host root) changes. A round starts in the manager's context (which plugins, which
 * devices), reads the file system outside it on the check lane (the kubelet's socket, each plugin's socket, group
 * nodes, the sources' re-checks), and posts what it read back to the context, where the kubelet's memory and the
 * plugins act on it (docs/ARCHITECTURE.md, "Where a kubelet restart happens").
 *
 * <p>Threads: {@code reading} and {@code again} are owned by the context; one round reads at a time, and requests
 * during a round fold into one more round after it. The watch thread only calls {@link #request()}.
 */
final class PluginChecks implements AutoCloseable {

    private final PluginEnvironment env;
    private final Supplier<Collection<ResourcePlugin>> plugins;
    private final SerialContext lane;
    private final HostWatcher watcher;
    private final Future<?> periodic;
    private boolean reading;
    private boolean again;

    /**
     * Starts watching and the periodic checks.
     *
     * @param plugins the plugins now; asked in the context only
     * @param lane    runs the reads outside the context, one round at a time
     * @param threads makes the directory watch's thread
     * @throws IOException when no watch service can be made
     */
    PluginChecks(PluginEnvironment env, Supplier<Collection<ResourcePlugin>> plugins, SerialContext lane,
                 List<Path> watched, long pollNanos, ThreadFactory threads) throws IOException {
        this.env = env;
        this.plugins = plugins;
        this.lane = lane;
        this.watcher = new HostWatcher(watched, this::request, threads).start();
        this.periodic = env.context().every(this::round, pollNanos);
    }

    /** Asks for one check round soon; any thread, never blocks. */
    void request() {
        env.context().execute(this::round);
    }

    /** In the context: starts a round, or folds into the one reading now. */
    private void round() {
        if (reading) {
            again = true;
            return;
        }
        reading = true;
        List<ResourcePlugin.Probe> probes = plugins.get().stream().map(ResourcePlugin::probe).toList();
        long looksBefore = env.kubelet().looks();
        lane.execute(() -> {
            try {
                watcher.ensureWatching();
                Optional<KubeletSocket.Identity> kubelet = KubeletSocket.read(env.kubelet().path());
                List<ResourcePlugin.Checked> read = probes.stream().map(this::read).toList();
                env.context().execute(() -> finish(kubelet, looksBefore, read));
            } catch (RuntimeException | LinkageError e) {
                env.context().execute(this::done);
                throw e;
            }
        });
    }

    /**
     * The blocking half of a check, outside the context: the plugin socket's key, the group nodes, and each
     * device's source asked whether it is still what was advertised.
     */
    private ResourcePlugin.Checked read(ResourcePlugin.Probe probe) {
        Map<String, Boolean> groupNodes = new HashMap<>();
        Map<String, String> identityChanges = new HashMap<>();
        for (Device device : probe.devices()) {
            device.iommuGroup().ifPresent(g -> groupNodes.computeIfAbsent(g, env.handovers()::groupNodePresent));
            DeviceCheck check = env.handovers().recheck(device);
            identityChanges.put(device.id(), check.unchanged() ? "" : check.describe(device.id()));
        }
        Object socketKey = probe.socket().map(PluginSockets::key).orElse(null);
        return new ResourcePlugin.Checked(probe.plugin(), probe.served(), socketKey, groupNodes, identityChanges);
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
            again = false;
            round();
        }
    }

    /** Stops the periodic checks and the watch (ending its thread). */
    @Override
    public void close() {
        periodic.cancel(false);
        watcher.close();
    }
}
