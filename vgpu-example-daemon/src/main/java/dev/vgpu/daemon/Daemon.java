package dev.vgpu.daemon;

import dev.vgpu.core.Durations;
import dev.vgpu.core.PciIds;
import dev.vgpu.core.Plan;
import dev.vgpu.core.Reconciler;
import dev.vgpu.core.RescanInterval;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.DeviceSources;
import dev.vgpu.deviceplugin.PluginManager;
import dev.vgpu.nvml.RecoveringNvml;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running node agent: sources, NVML, the plugin manager and the rescan loop, wired once.
 *
 * <p>Threads: construction and {@link #close()} run on the caller (main, or the shutdown hook); after start
 * the rescan thread owns scanning and applying plans, and retries NVML before each scan while it is down;
 * with rescans off, NVML's own retry thread retries it instead and queues one rescan when it comes up. The
 * NVML watcher thread only reports GPU health to the plugin manager, which is thread-safe.
 */
final class Daemon implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Daemon.class);
    /** How often NVML is retried while it is down when no rescans do it. */
    static final Duration NVML_RETRY_WITHOUT_RESCANS = Duration.ofMinutes(1);

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

    private final RecoveringNvml nvml;
    private final PluginManager plugins;
    private final RescanLoop loop;
    private final Snapshot initial;
    private boolean closed;

    private Daemon(RecoveringNvml nvml, PluginManager plugins, RescanLoop loop, Snapshot initial) {
        this.initial = initial;
        this.nvml = nvml;
        this.plugins = plugins;
        this.loop = loop;
    }

    /** Scans, serves every resource found and starts the rescan loop when enabled. */
    static Daemon start(Config config) {
        RecoveringNvml nvml = config.nvmlOptions().openNvml();
        List<DeviceSource> sources = DeviceSources.load();
        config.interval().raisedFrom().ifPresent(raw -> LOG.warn(
                "rescan interval {} is below the {} floor; using {}", Durations.formatGo(raw),
                Durations.formatGo(Durations.MIN_RESCAN_INTERVAL), Durations.formatGo(config.interval().period())));
        LOG.info("vgpu daemon starting: host root {}, device-plugin dir {}, sources {}, {}, rescan {}, pci.ids {}",
                config.hostRoot(), config.devicePluginDir(), sources.stream().map(DeviceSource::name).toList(),
                nvml.description(), config.interval().enabled() ? "every " + Durations.formatGo(config.interval().period())
                        : "disabled (devices are discovered once at start)",
                config.pciIds());
        Scanner scanner = new Scanner(config.hostRoot(), config.pciIds(), nvml.vgpuTypeResolver(), sources);
        PluginManager plugins = PluginManager.builder().hostRoot(config.hostRoot())
                .devicePluginDir(config.devicePluginDir()).build();
        Snapshot first = scanner.scan(Snapshot.empty());
        Plan plan = Reconciler.plan(Snapshot.empty(), first);
        plugins.apply(first, plan);
        LOG.info("serving {} resources with {} devices; {} devices skipped", first.resources().size(),
                first.deviceCount(), first.skipped().size());
        nvml.watchXids((gpu, xid) -> plugins.markGpuUnhealthy(gpu, "NVML XID " + xid)); // now, or once NVML is up
        RescanLoop loop = new RescanLoop(scanner, plugins::apply, config.interval().enabled()
                ? config.interval().period() : Durations.MIN_RESCAN_INTERVAL, first, nvml::retry);
        if (config.interval().enabled()) {
            loop.start();
        } else {
            // No scan will retry NVML: its own thread does, and one rescan names what only NVML can name.
            nvml.onRecovery(loop::runSoon);
            nvml.retryEvery(NVML_RETRY_WITHOUT_RESCANS);
        }
        return new Daemon(nvml, plugins, loop, first);
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

    /** Stops the rescan loop, NVML (its retry thread and XID watcher) and every plugin (their sockets are deleted). */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        LOG.info("stopping: {} resources", plugins.running().size());
        loop.close();
        nvml.close();
        plugins.close();
        LOG.info("stopped; every plugin socket removed");
    }
}
