package dev.vgpu.daemon.agent;

import dev.vgpu.core.RescanInterval;
import dev.vgpu.core.RescanLoop;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.GoDurations;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.core.spi.StateDirectory;
import dev.vgpu.daemon.config.LiveConfig;
import dev.vgpu.daemon.ops.Metrics;
import dev.vgpu.daemon.ops.OpsServer;
import dev.vgpu.daemon.process.DaemonVersion;
import dev.vgpu.daemon.process.Signals;
import dev.vgpu.daemon.scan.HostOptions;
import dev.vgpu.nvml.RecoveringNvml;
import dev.vgpu.nvml.XidPolicy;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running node agent of {@code serve} (and {@code demo}), in either mode: it owns the host, the scanner, NVML,
 * the configuration in force and {@code SIGHUP}, the rescan loop, the ops server and the first scan, and drives one
 * {@link NodeAdapter} (the device plugins, or the DRA plugin), which only receives snapshots and GPU faults and
 * answers the probes.
 *
 * <p>Start ({@link #start}): NVML's first attempt begins beside everything else; the start line; the adapter opens;
 * the ops server listens; {@code SIGHUP} is handled from here on; the host is prepared; the first scan runs and is
 * served; once NVML's first attempt ended, XID events, then periodic rescans (or NVML's own retries).
 *
 * <p>Threads: {@link #start} and {@link #close()} run on the caller (main, or the shutdown hook). One agent thread
 * ({@code vgpu-rescan}) owns the loop's rounds (the first scan's too, so the liveness probe sees it hang) and every
 * {@link AgentEvent} ({@link #handle}): a {@code SIGHUP} (the JVM's signal thread only posts it), NVML coming up, a
 * kubelet restart the adapter reports. So a reload never runs beside a round, and a round sees one configuration
 * from its first source to its last. NVML's XID watcher calls the adapter, which only posts. The ops server's thread
 * reads published values only.
 */
public final class NodeAgent implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NodeAgent.class);
    /** How often NVML is tried again when no rescan does it (rescans off). */
    static final Duration NVML_RETRY_WITHOUT_RESCANS = Duration.ofMinutes(1);
    /** The liveness deadline of one round when none is configured. */
    public static final Duration DEFAULT_SCAN_DEADLINE = Duration.ofMinutes(1);
    /** The default of {@code --unhealthy-after-failed-scans}. */
    public static final int DEFAULT_FAILED_SCANS_LIMIT = FailedScans.DEFAULT_LIMIT;

    /**
     * What the agent runs with.
     *
     * @param host             the host to scan: its root, its file reader and pci.ids names
     * @param pciIds           where the names came from, for the start line and {@code vgpu_build_info}
     * @param sources          the sources to scan with
     * @param stateDirectory   where sources keep what they learned across restarts; empty = in memory only
     * @param interval         the rescan policy
     * @param metricsAddress   where to serve metrics and probes; empty = off
     * @param scanDeadline     a round running longer than this fails the liveness probe
     * @param failedScansLimit this many failed rounds in a row fail the liveness probe; 0 = never
     * @param config           the configuration in force (renames, exclusions, type names, XID policy)
     * @param nvml             NVML's options: opened beside the first scan (its first attempt on a thread of its
     *                         own), or off ({@code --no-nvml})
     * @param preparation      what is done to the host before the first scan and after each reload
     */
    public record Settings(Host host, PciIdsInUse pciIds, List<DeviceSource> sources,
                           Optional<StateDirectory> stateDirectory, RescanInterval interval,
                           Optional<InetSocketAddress> metricsAddress, Duration scanDeadline, int failedScansLimit,
                           LiveConfig config, HostOptions nvml, HostPreparation preparation) {
        /** Copies the sources; checks that nothing is missing. */
        public Settings {
            Objects.requireNonNull(host, "host");
            Objects.requireNonNull(pciIds, "pciIds");
            sources = List.copyOf(sources);
            Objects.requireNonNull(stateDirectory, "stateDirectory");
            Objects.requireNonNull(interval, "interval");
            Objects.requireNonNull(metricsAddress, "metricsAddress");
            Objects.requireNonNull(scanDeadline, "scanDeadline");
            if (failedScansLimit < 0) {
                throw new IllegalArgumentException("the limit of failed scans is negative: " + failedScansLimit);
            }
            Objects.requireNonNull(config, "config");
            Objects.requireNonNull(nvml, "nvml");
            Objects.requireNonNull(preparation, "preparation");
        }
    }

    /**
     * Where the pci.ids names came from.
     *
     * @param description for the start line, with the count of names
     * @param source      for {@code vgpu_build_info}: the database and its version
     */
    public record PciIdsInUse(String description, String source) {
    }

    /**
     * What the agent does to the host before its first scan, and again after each {@code SIGHUP}'s reload before the
     * rescan it asks for (where a vGPU layout is applied). Runs on the agent's thread; an exception it throws is one
     * WARN and the agent goes on.
     */
    @FunctionalInterface
    public interface HostPreparation {
        /** Nothing to do. */
        HostPreparation NONE = () -> { };

        /** Prepares the host. */
        void prepare();

        /**
         * The type names the scans use, given NVML's: a preparation that names types (the vGPU layout, whose full
         * cards list none) puts its names beside them. Called once, at start.
         */
        default dev.vgpu.core.spi.VgpuTypeResolver typeNames(dev.vgpu.core.spi.VgpuTypeResolver nvml) {
            return nvml;
        }

        /** Registers the preparation's own metrics beside the agent's. Called once, at start. */
        default void register(io.prometheus.metrics.model.registry.PrometheusRegistry registry) {
        }
    }

    private final Settings settings;
    private final RecoveringNvml nvml;
    private final Metrics metrics;
    private final ScheduledExecutorService agentThread;
    private final NodeAdapter adapter;
    private final RescanLoop loop;
    private final Optional<OpsServer> ops;
    /** The snapshot of the first scan, for {@code demo}; written once by the starting thread. */
    private volatile Snapshot firstServed = Snapshot.empty();
    /** Guarded by this agent's lock: start and close may race (a SIGTERM during start). */
    private boolean closed;

    private NodeAgent(Settings settings, RecoveringNvml nvml, Metrics metrics, ScheduledExecutorService agentThread,
                      NodeAdapter adapter, RescanLoop loop, Optional<OpsServer> ops) {
        this.settings = settings;
        this.nvml = nvml;
        this.metrics = metrics;
        this.agentThread = agentThread;
        this.adapter = adapter;
        this.loop = loop;
        this.ops = ops;
    }

    /**
     * Starts the agent and its adapter, scans, serves what it found and runs on; {@code created} gets the agent before
     * the first scan, so that a stop (SIGTERM) that arrives during it can already close everything started so far.
     *
     * @throws CannotStart in words, for an exit 2 (the adapter cannot open, the metrics port is taken)
     */
    public static NodeAgent start(Settings settings, NodeAdapter.Opener opener, Consumer<NodeAgent> created) {
        RescanInterval interval = settings.interval();
        interval.raisedFrom().ifPresent(raw -> LOG.warn("rescan interval {} is below the {} floor; using {}",
                GoDurations.format(raw), GoDurations.format(RescanInterval.FLOOR),
                GoDurations.format(interval.period())));
        // Loaded beside the first scan: that scan waits for it only to name a vGPU type only NVML knows.
        RecoveringNvml nvml = settings.nvml().openNvmlBesideTheFirstScan();
        LiveConfig live = settings.config();
        LOG.info("vgpu daemon {} starting: host root {}, {}, host files read {}, sources {}, {}, rescan {}, pci.ids {},"
                + " state dir {}, configuration {}, /healthz fails after {}", DaemonVersion.current(),
                settings.host().root(), opener.describe(), settings.host().files().describe(),
                settings.sources().stream().map(DeviceSource::name).toList(), nvml.description(),
                interval.enabled() ? "every " + GoDurations.format(interval.period())
                        : "disabled (devices are discovered once at start)",
                settings.pciIds().description(), settings.stateDirectory().map(d -> d.path().toString()
                        + (d.mayWrite() ? "" : " (read only)")).orElse("off (learned profile names are lost at a"
                        + " restart)"), settings.nvml().noNvml() ? live.describeWithoutNvml() : live.describe(),
                settings.failedScansLimit() == 0 ? "no number of failed scans"
                        : settings.failedScansLimit() + " failed scans in a row");
        Host bare = settings.host();
        Host host = bare.withVgpuTypes(live.resolverAfter(settings.preparation().typeNames(nvml.vgpuTypeResolver()),
                bare));
        Metrics metrics = new Metrics(Clock.systemUTC());
        metrics.buildInfo(DaemonVersion.current(), settings.pciIds().source());
        settings.preparation().register(metrics.registry());
        ScheduledExecutorService agentThread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "vgpu-rescan");
            t.setDaemon(true);
            return t;
        });
        // What is started from here on is closed again, newest first, when the start fails before the agent owns it.
        List<AutoCloseable> opened = new ArrayList<>(List.<AutoCloseable>of(nvml, agentThread::shutdownNow));
        NodeAdapter adapter;
        try {
            adapter = opener.open(new NodeAdapter.Context(host, settings.sources(), metrics, nvml::checkGpu,
                    live.xidPolicy().recoverAfter()));
        } catch (CannotStart e) {
            closeNewestFirst(opened);
            throw e;
        } catch (IOException | RuntimeException e) {
            closeNewestFirst(opened);
            throw new CannotStart(opener.describe() + ": cannot start: " + causes(e), e);
        }
        opened.add(adapter);
        FailedScans failedScans = new FailedScans(metrics, settings.failedScansLimit());
        Scanner named = new Scanner(settings.stateDirectory().map(host::withStateDirectory).orElse(host),
                settings.sources(), live::rules);
        Scanner scanner = opener.namesAreAttributes() ? named.withNamesAsAttributes() : named;
        RescanLoop loop = RescanLoop.builder(scanner, adapter)
                .period(interval.enabled() ? interval.period() : RescanInterval.FLOOR)
                .observer(failedScans).beforeScan(nvml::retry).scheduler(agentThread).build();
        opened.add(loop);
        metrics.readFrom(adapter::resources, loop::current, nvml::available);
        Optional<OpsServer> ops;
        try {
            Duration deadline = settings.scanDeadline();
            ops = settings.metricsAddress().isEmpty() ? Optional.empty() : Optional.of(OpsServer.start(
                    settings.metricsAddress().get(), metrics, () -> notLive(loop, deadline, failedScans, adapter),
                    adapter::notReady));
        } catch (IOException e) {
            closeNewestFirst(opened);
            throw new CannotStart("cannot listen on " + settings.metricsAddress().get() + " for metrics and probes: "
                    + e.getMessage() + " (choose another --metrics-address, or an empty one to turn metrics off)", e);
        }
        NodeAgent agent = new NodeAgent(settings, nvml, metrics, agentThread, adapter, loop, ops);
        created.accept(agent);
        agent.serveFirstScan();
        return agent;
    }

    /**
     * Why the node is not live: a round stuck past its deadline, too many failed rounds in a row, or what the
     * adapter says (a plugin that cannot serve, a transport that lost a call to a JVM error).
     */
    static List<String> notLive(RescanLoop loop, Duration deadline, FailedScans failedScans, NodeAdapter adapter) {
        List<String> problems = new ArrayList<>();
        failedScans.problem().ifPresent(problems::add);
        loop.runningFor().filter(running -> running.compareTo(deadline) > 0).ifPresent(running -> problems.add(
                "a discovery round has been running for " + GoDurations.format(running.truncatedTo(
                        ChronoUnit.SECONDS)) + ", longer than its deadline " + GoDurations.format(deadline)
                        + " (is a sysfs read blocked?)"));
        problems.addAll(adapter.notLive());
        return problems;
    }

    /**
     * From start to serving: {@code SIGHUP} handled (from here on a SIGHUP once "serving" is logged is never the
     * JVM's default, an exit), the host prepared and the first scan, both on the agent's thread, which the caller
     * waits for; then, once NVML's first attempt ended, XID events and periodic rescans or NVML retries. Nothing more
     * once the agent was closed meanwhile.
     */
    private void serveFirstScan() {
        Signals.onHangup(() -> {
            metrics.rescanRequested();
            post(new AgentEvent.Hangup());
        });
        LOG.info("first scan of the host");
        try {
            agentThread.submit(this::prepareHost).get();
            loop.runNow();
        } catch (RejectedExecutionException e) {
            return; // closed during start
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("preparing the host failed", e.getCause());
        }
        if (isClosed()) {
            return;
        }
        Snapshot first = loop.current();
        firstServed = first;
        LOG.info(adapter.served(first));
        // From here on as if NVML had been opened before the scan (registration is already under way).
        nvml.awaitFirstAttempt();
        if (isClosed()) {
            return; // stopped while NVML loaded: nothing more to start
        }
        if (!settings.config().xidPolicy().watch(nvml, new XidHealth(metrics, adapter::markGpuUnhealthy))) {
            LOG.info("XID health off: health.xid.enabled is false in the configuration; no NVML event is registered");
        }
        if (settings.interval().enabled()) {
            loop.start();
        } else {
            nvml.onRecovery(() -> post(new AgentEvent.NvmlUp()));
            nvml.retryEvery(NVML_RETRY_WITHOUT_RESCANS);
        }
    }

    /** Posts an event to the agent's thread; nothing happens once the agent is closed. Never blocks. */
    void post(AgentEvent event) {
        try {
            agentThread.execute(() -> handle(event));
        } catch (RejectedExecutionException e) {
            LOG.debug("agent stopped; {} not handled", event);
        }
    }

    /** Every event of a running agent, on its thread: the one place a SIGHUP and NVML's recovery are handled. */
    void handle(AgentEvent event) {
        if (event instanceof AgentEvent.Hangup) {
            reloadConfiguration();
            prepareHost();
            LOG.info("SIGHUP: rescanning now{}", loop.requestRescan() ? "" : " (a rescan is already waiting)");
        } else if (event instanceof AgentEvent.NvmlUp) {
            loop.requestRescan();
        }
    }

    /**
     * Reads the configuration file again (an invalid one is one WARN and the one in force stays); a changed XID policy
     * applies at once: its ignored XIDs to NVML's watcher, its recovery period to the adapter's faults.
     */
    private void reloadConfiguration() {
        LiveConfig live = settings.config();
        XidPolicy before = live.xidPolicy();
        live.requestReload();
        live.reloadIfRequested();
        XidPolicy after = live.xidPolicy();
        if (!after.equals(before)) {
            try {
                nvml.ignoreXids(after.ignored());
                adapter.recoverGpuFaultsAfter(after.recoverAfter());
            } catch (RuntimeException e) {
                LOG.error("SIGHUP: applying health.xid ({}) failed: {}", after, e.toString(), e);
            }
        }
    }

    private void prepareHost() {
        try {
            settings.preparation().prepare();
        } catch (RuntimeException e) {
            LOG.warn("preparing the host failed; serving goes on with the host as it is: {}", e.toString(), e);
        }
    }

    private synchronized boolean isClosed() {
        return closed;
    }

    /** Runs one rescan round now, on the agent's thread, and waits for it (used by {@code demo}). */
    public void rescanNow() {
        loop.runNow();
    }

    /** The snapshot the first scan served (used by {@code demo}). */
    public Snapshot firstServed() {
        return firstServed;
    }

    /** Stops the ops server, the loop, NVML (its retry thread and XID watcher), the adapter and the agent's thread. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        LOG.info("stopping: {} resources", loop.current().resources().size());
        ops.ifPresent(OpsServer::close);
        loop.close();
        agentThread.shutdownNow();
        try {
            if (!agentThread.awaitTermination(2, TimeUnit.SECONDS)) {
                LOG.warn("the agent's thread did not stop within 2 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        nvml.close();
        adapter.close();
        LOG.info("stopped");
    }

    /** The messages of a failure and its causes, without class names, e.g. a class a library could not load. */
    public static String causes(Throwable e) {
        List<String> messages = new ArrayList<>();
        for (Throwable t = e; t != null && messages.size() < 4; t = t.getCause() == t ? null : t.getCause()) {
            String text = t instanceof ClassNotFoundException || t instanceof NoClassDefFoundError
                    ? "class " + t.getMessage() + " is missing" : t.getMessage();
            if (text != null && !text.isBlank() && !messages.contains(text)) {
                messages.add(dev.vgpu.core.internal.Printable.of(text, 200));
            }
        }
        return messages.isEmpty() ? "no reason given" : String.join(": ", messages);
    }

    /** Closes what a failed start opened, newest first; a failure to close is logged, not thrown. */
    private static void closeNewestFirst(List<AutoCloseable> opened) {
        for (int i = opened.size() - 1; i >= 0; i--) {
            try {
                opened.get(i).close();
            } catch (Exception e) {
                LOG.warn("Closing after a failed start: {}", e.toString());
            }
        }
    }
}
