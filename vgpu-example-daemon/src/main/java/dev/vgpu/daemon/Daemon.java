package dev.vgpu.daemon;

import dev.vgpu.core.Durations;
import dev.vgpu.core.PciIds;
import dev.vgpu.core.Plan;
import dev.vgpu.core.Reconciler;
import dev.vgpu.core.RescanInterval;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.deviceplugin.PluginManager;
import dev.vgpu.nvml.Nvml;
import dev.vgpu.nvml.XidWatcher;
import java.nio.file.Path;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running node agent: sources, NVML, the plugin manager and the rescan loop, wired once.
 *
 * <p>Threads: construction and {@link #close()} run on the caller (main, or the shutdown hook); after start
 * the rescan thread owns scanning and applying plans; the NVML watcher thread only reports GPU health to the
 * plugin manager, which is thread-safe.
 */
final class Daemon implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Daemon.class);

    /**
     * What the daemon needs.
     *
     * @param hostRoot        the directory standing for the host's /
     * @param devicePluginDir the kubelet's device-plugin directory
     * @param pciIds          pci.ids names for passthrough resources
     * @param interval        the rescan policy
     * @param nvmlOptions     whether and where to load NVML
     */
    record Config(Path hostRoot, Path devicePluginDir, PciIds pciIds, RescanInterval interval, HostOptions nvmlOptions) {
    }

    private final Nvml nvml;
    private final PluginManager plugins;
    private final RescanLoop loop;
    private final XidWatcher xidWatch;
    private final Snapshot initial;
    private boolean closed;

    private Daemon(Nvml nvml, PluginManager plugins, RescanLoop loop, XidWatcher xidWatch, Snapshot initial) {
        this.initial = initial;
        this.nvml = nvml;
        this.plugins = plugins;
        this.loop = loop;
        this.xidWatch = xidWatch;
    }

    /** Scans, serves every resource found and starts the rescan loop when enabled. */
    static Daemon start(Config config) {
        Nvml nvml = config.nvmlOptions().openNvml();
        List<DeviceSource> sources = config.nvmlOptions().sources();
        config.interval().raisedFrom().ifPresent(raw -> LOG.warn(
                "rescan interval {} is below the {} floor; using {}", Durations.formatGo(raw),
                Durations.formatGo(Durations.MIN_RESCAN_INTERVAL), Durations.formatGo(config.interval().period())));
        LOG.info("vgpu daemon starting: host root {}, device-plugin dir {}, sources {}, {}, rescan {}, pci.ids {}",
                config.hostRoot(), config.devicePluginDir(), sources.stream().map(DeviceSource::name).toList(),
                nvml.description(), config.interval().enabled() ? "every " + Durations.formatGo(config.interval().period())
                        : "disabled (devices are discovered once at start)",
                config.nvmlOptions().describePciIds());
        Scanner scanner = new Scanner(config.hostRoot(), config.pciIds(), nvml.vgpuTypeResolver(), sources);
        PluginManager plugins = PluginManager.builder().hostRoot(config.hostRoot())
                .devicePluginDir(config.devicePluginDir()).build();
        Snapshot first = scanner.scan(Snapshot.empty());
        Plan plan = Reconciler.plan(Snapshot.empty(), first);
        plugins.apply(first, plan);
        LOG.info("serving {} resources with {} devices; {} devices skipped", first.resources().size(),
                first.deviceCount(), first.skipped().size());
        XidWatcher xidWatch = XidWatcher.start(nvml, (gpu, xid) -> plugins.markGpuUnhealthy(gpu, "NVML XID " + xid));
        RescanLoop loop = new RescanLoop(scanner, plugins::apply, config.interval().enabled()
                ? config.interval().period() : Durations.MIN_RESCAN_INTERVAL, first);
        if (config.interval().enabled()) {
            loop.start();
        }
        return new Daemon(nvml, plugins, loop, xidWatch, first);
    }

    /** Runs one rescan round now, on the rescan thread, and waits for it (used by {@code demo}). */
    void rescanNow() {
        loop.runNow();
    }

    /** The snapshot of the first scan (used by {@code demo}). */
    Snapshot initialSnapshot() {
        return initial;
    }

    /** The plugin manager (used by {@code demo}). */
    PluginManager plugins() {
        return plugins;
    }

    /** Stops the rescan loop, the XID watcher and every plugin (their sockets are deleted). */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        LOG.info("stopping: {} resources", plugins.running().size());
        loop.close();
        xidWatch.close();
        plugins.close();
        nvml.close();
        LOG.info("stopped; every plugin socket removed");
    }
}
