package dev.vgpu.daemon;

import dev.vgpu.core.PciIds;
import dev.vgpu.core.RescanInterval;
import dev.vgpu.core.RescanLoop;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.GoDurations;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.deviceplugin.PluginManager;
import dev.vgpu.nvml.RecoveringNvml;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running node agent: sources, NVML, the plugin manager and the rescan loop, wired once.
 *
 * <p>Threads: construction and {@link #close()} run on the caller (main, or the shutdown hook); NVML's first
 * attempt runs on a thread of its own during the first scan, which waits for it only where it asks NVML; after start
 * the rescan thread owns scanning and applying plans, and retries NVML before each scan while it is down;
 * with rescans off, NVML's own retry thread retries it instead and queues one rescan when it comes up. The
 * NVML watcher thread only reports GPU health to the plugin manager, which is thread-safe.
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
     * @param metricsAddress  where to serve metrics and probes; empty = off
     * @param scanDeadline    a round running longer than this fails the liveness probe
     * @param stateDir        where sources keep what they learned across restarts; empty = in memory only
     * @param config          the configuration file in force (renames, exclusions, type names, XID policy)
     * @param failedScansLimit this many failed discovery rounds in a row fail the liveness probe; 0 = never
     */
    record Config(Path hostRoot, Path devicePluginDir, PciIds pciIds, RescanInterval interval, HostOptions nvmlOptions,
                  Optional<InetSocketAddress> metricsAddress, Duration scanDeadline, Optional<Path> stateDir,
                  LiveConfig config, int failedScansLimit) {

        /** With the default limit of failed scans. */
        Config(Path hostRoot, Path devicePluginDir, PciIds pciIds, RescanInterval interval, HostOptions nvmlOptions,
               Optional<InetSocketAddress> metricsAddress, Duration scanDeadline, Optional<Path> stateDir,
               LiveConfig config) {
            this(hostRoot, devicePluginDir, pciIds, interval, nvmlOptions, metricsAddress, scanDeadline, stateDir,
                    config, FailedScans.DEFAULT_LIMIT);
        }

        /** Without a configuration file. */
        Config(Path hostRoot, Path devicePluginDir, PciIds pciIds, RescanInterval interval, HostOptions nvmlOptions,
               Optional<InetSocketAddress> metricsAddress, Duration scanDeadline, Optional<Path> stateDir) {
            this(hostRoot, devicePluginDir, pciIds, interval, nvmlOptions, metricsAddress, scanDeadline, stateDir,
                    LiveConfig.none());
        }
    }

    /** The liveness deadline of one rescan round when none is configured. */
    static final Duration DEFAULT_SCAN_DEADLINE = Duration.ofMinutes(1);

    private final RecoveringNvml nvml;
    private final PluginManager plugins;
    private final RescanLoop loop;
    private final Optional<OpsServer> ops;
    /** Set by {@code start} after the first scan. */
    private volatile Snapshot initial = Snapshot.empty();
    private boolean closed;

    private Daemon(RecoveringNvml nvml, PluginManager plugins, RescanLoop loop, Optional<OpsServer> ops) {
        this.nvml = nvml;
        this.plugins = plugins;
        this.loop = loop;
        this.ops = ops;
    }

    /** Scans, serves every resource found and starts the rescan loop when enabled. */
    static Daemon start(Config config) {
        return start(config, daemon -> { });
    }

    /**
     * Like {@link #start(Config)}, handing the daemon to {@code created} before the first scan, so that a stop
     * (SIGTERM) that arrives during the first scan can already close everything started so far.
     */
    static Daemon start(Config config, java.util.function.Consumer<Daemon> created) {
        // Loaded beside the first scan: that scan waits for it only to name a vGPU type only NVML knows.
        RecoveringNvml nvml = config.nvmlOptions().openNvmlBesideTheFirstScan();
        List<DeviceSource> sources = config.nvmlOptions().sources();
        ScanRounds.warnIfRaised(config.interval(), LOG);
        LiveConfig live = config.config();
        LOG.info("vgpu daemon {} starting: host root {}, device-plugin dir {}, sources {}, {}, rescan {}, pci.ids {},"
                + " state dir {}, configuration {}, /healthz fails after {}", VgpuDaemon.version(), config.hostRoot(), config.devicePluginDir(),
                sources.stream().map(DeviceSource::name).toList(), nvml.description(), config.interval().enabled()
                        ? "every " + GoDurations.format(config.interval().period())
                        : "disabled (devices are discovered once at start)",
                config.nvmlOptions().describePciIds(), config.stateDir().map(Path::toString)
                        .orElse("off (learned profile names are lost at a restart)"), live.describe(),
                config.failedScansLimit() == 0 ? "no number of failed scans"
                        : config.failedScansLimit() + " failed scans in a row");
        Host bare = Host.of(config.hostRoot());
        Host host = bare.withPciIds(config.pciIds()).withVgpuTypes(live.resolverAfter(nvml.vgpuTypeResolver(), bare));
        Scanner scanner = new Scanner(config.stateDir().map(host::withStateDirectory).orElse(host), sources,
                live::rules);
        AtomicReference<PluginManager> manager = new AtomicReference<>();
        AtomicReference<RescanLoop> rescans = new AtomicReference<>();
        Metrics metrics = new Metrics(() -> manager.get() == null ? List.of() : manager.get().status(),
                () -> rescans.get() == null ? Snapshot.empty() : rescans.get().current(), nvml::available,
                Clock.systemUTC());
        metrics.buildInfo(VgpuDaemon.version(), config.nvmlOptions().pciIdsSource());
        // A GPU an XID marked recovers after health.xid.recoverAfter without another counted XID, if NVML answers.
        PluginManager plugins = PluginManager.builder().hostRoot(config.hostRoot()).hostFiles(host.files())
                .devicePluginDir(config.devicePluginDir()).sources(sources).observer(metrics)
                .gpuFaultRecovery(live.xidPolicy().recoverAfter(), nvml::checkGpu).build();
        manager.set(plugins);
        // A SIGHUP's ignore list and quiet period apply from its round on (read on the rescan thread).
        live.onXidPolicy(policy -> {
            nvml.ignoreXids(policy.ignored());
            plugins.recoverGpuFaultsAfter(policy.recoverAfter());
        });
        FailedScans failedScans = new FailedScans(metrics, config.failedScansLimit());
        RescanLoop loop = ScanRounds.loop(scanner, plugins, config.interval(), failedScans, live, nvml);
        rescans.set(loop);
        Optional<OpsServer> ops;
        try {
            ops = config.metricsAddress().isEmpty() ? Optional.empty() : Optional.of(OpsServer.start(
                    config.metricsAddress().get(), metrics,
                    () -> liveness(loop, plugins, config.scanDeadline(), failedScans),
                    () -> readiness(plugins)));
        } catch (java.io.IOException e) {
            loop.close();
            plugins.close();
            nvml.close();
            throw new CannotStart("cannot listen on " + config.metricsAddress().get() + " for metrics and probes: "
                    + e.getMessage() + " (choose another --metrics-address, or an empty one to turn metrics off)", e);
        }
        Daemon daemon = new Daemon(nvml, plugins, loop, ops);
        created.accept(daemon);
        if (!ScanRounds.firstScan(metrics, live, loop, daemon::isClosed, LOG)) {
            return daemon;
        }
        Snapshot first = loop.current();
        daemon.initial = first;
        LOG.info("serving {} resources with {} devices; {} devices skipped", first.resources().size(),
                first.deviceCount(), first.skipped().size());
        // From here on as if NVML had been opened before the scan (registration is already under way).
        ScanRounds.afterFirstScan(config.interval(), live, nvml, loop, metrics, plugins::markGpuUnhealthy,
                daemon::isClosed, LOG);
        return daemon;
    }

    private synchronized boolean isClosed() {
        return closed;
    }

    /**
     * Why the daemon is not live: a round stuck past its deadline, too many failed rounds in a row, a plugin that
     * cannot serve, or a gRPC transport that lost a call to a JVM error (docs/RELIABILITY.md, "The gRPC servers").
     */
    static List<String> liveness(RescanLoop loop, PluginManager plugins, Duration deadline, FailedScans failedScans) {
        List<String> problems = new ArrayList<>(ScanRounds.liveness(loop, deadline, failedScans));
        plugins.status().stream().filter(s -> !s.serving()).forEach(s -> problems.add(
                "the device plugin of " + s.name().fullName() + " is not serving on its socket"));
        plugins.transportFailure().ifPresent(failure -> problems.add(failure + "; restart the daemon"));
        return problems;
    }

    /**
     * Why the daemon is not ready: the kubelet's socket is missing (the kubelet is down or restarting, so nothing can
     * be allocated), or an advertised resource is not registered with the kubelet.
     */
    static List<String> readiness(PluginManager plugins) {
        List<String> problems = new ArrayList<>();
        if (!plugins.kubeletSocketPresent()) {
            problems.add("the kubelet's socket " + plugins.devicePluginDir().resolve("kubelet.sock") + " is missing:"
                    + " the kubelet is down or restarting (the resources stay served and register again once it is"
                    + " back)");
        }
        plugins.status().stream().filter(s -> !s.registered()).forEach(s -> problems.add(
                s.name().fullName() + " is not registered with the kubelet"));
        return problems;
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
        ops.ifPresent(OpsServer::close);
        loop.close();
        nvml.close();
        plugins.close();
        LOG.info("stopped; every plugin socket removed");
    }
}
