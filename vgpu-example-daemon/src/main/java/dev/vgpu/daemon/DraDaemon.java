package dev.vgpu.daemon;

import dev.vgpu.attach.Handovers;
import dev.vgpu.core.PciIds;
import dev.vgpu.core.RescanInterval;
import dev.vgpu.core.RescanLoop;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.GoDurations;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.deviceplugin.ResourceStatus;
import dev.vgpu.dra.DraPlugin;
import dev.vgpu.dra.DraStatus;
import dev.vgpu.dra.KubeletRegistration;
import dev.vgpu.dra.apiserver.ApiClaimReader;
import dev.vgpu.dra.apiserver.ApiServer;
import dev.vgpu.dra.apiserver.SlicePublisher;
import dev.vgpu.nvml.RecoveringNvml;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code serve --mode dra}: the same scan loop as device-plugin mode ({@link Scanner}, {@link RescanLoop},
 * {@link LiveConfig} and {@code SIGHUP}, NVML, the ops server with its probes), but each snapshot goes to the DRA
 * kubelet plugin, whose one owner keeps the devices, their health (the device plugin's checks and XID policy) and
 * the prepared claims, and hands the pool to the ResourceSlice publisher (the unhealthy devices become the slices'
 * taints). XIDs mark devices through the same {@link XidHealth} as in device-plugin mode. Loaded only in DRA mode, so
 * device-plugin mode loads no fabric8 class.
 *
 * <p>Threads: construction and {@link #close()} run on the caller (main, or the shutdown hook). After start the
 * rescan thread scans and hands each snapshot to {@link DraPlugin#apply}; every thread of the plugin, the publisher
 * and the API client comes from {@link #THREADS}; the NVML watcher only posts marks to the plugin.
 */
final class DraDaemon implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DraDaemon.class);
    /** Makes every thread of the DRA plugin, the slice publisher and the API client (plain daemon threads). */
    static final ThreadFactory THREADS = Thread::new;

    /**
     * What DRA mode needs; as {@link Daemon.Config} without the device-plugin directory, with the DRA settings.
     *
     * @param stateDir the checkpoint and the lock; required in DRA mode
     */
    record Config(Path hostRoot, PciIds pciIds, RescanInterval interval, HostOptions nvmlOptions,
                  Optional<InetSocketAddress> metricsAddress, Duration scanDeadline, Path stateDir, LiveConfig config,
                  int failedScansLimit, DraOptions.Settings dra) {
    }

    private final RecoveringNvml nvml;
    private final ApiServer api;
    private final DraPlugin plugin;
    private final SlicePublisher slices;
    private final RescanLoop loop;
    private final Optional<OpsServer> ops;
    private boolean closed;

    private DraDaemon(RecoveringNvml nvml, ApiServer api, DraPlugin plugin, SlicePublisher slices, RescanLoop loop,
                      Optional<OpsServer> ops) {
        this.nvml = nvml;
        this.api = api;
        this.plugin = plugin;
        this.slices = slices;
        this.loop = loop;
        this.ops = ops;
    }

    /**
     * Connects, serves both plugin sockets, scans and publishes; {@code created} gets the daemon before the first
     * scan so that a stop during it closes everything.
     *
     * @throws CannotStart in words, for an exit 2
     */
    static DraDaemon start(Config config, Consumer<DraDaemon> created) {
        DraOptions.Settings dra = config.dra();
        List<DeviceSource> sources = config.nvmlOptions().sources();
        ScanRounds.warnIfRaised(config.interval(), LOG);
        ApiServer api;
        try {
            api = ApiServer.connect(dra.kubeconfig(), THREADS);
        } catch (IOException | RuntimeException e) {
            LOG.debug("cannot build the API server client", e);
            throw new CannotStart(dra.kubeconfig().map(f -> "the kubeconfig " + f).orElse("the in-cluster API server"
                    + " configuration") + " cannot be used: " + causes(e), e);
        }
        // Loaded beside the first scan, as in device-plugin mode.
        RecoveringNvml nvml = config.nvmlOptions().openNvmlBesideTheFirstScan();
        LiveConfig live = config.config();
        LOG.info("vgpu daemon {} starting in DRA mode: driver {}, node {}, kubelet root {}, CDI dir {}, API server {},"
                + " host root {}, sources {}, {}, rescan {}, pci.ids {}, state dir {}, configuration {}",
                VgpuDaemon.version(), dra.driver(), dra.nodeName(), dra.kubeletRoot(), dra.cdiDir(),
                dra.kubeconfig().map(f -> api.masterUrl() + " (kubeconfig " + f + ")")
                        .orElse(api.masterUrl() + " (in-cluster)"), config.hostRoot(),
                sources.stream().map(DeviceSource::name).toList(), nvml.description(), config.interval().enabled()
                        ? "every " + GoDurations.format(config.interval().period())
                        : "disabled (devices are discovered once at start)",
                config.nvmlOptions().describePciIds(), config.stateDir(), (config.nvmlOptions().noNvml ? live.describeWithoutNvml() : live.describe()));
        Host host = new Host(config.hostRoot(), config.pciIds(),
                live.resolverAfter(nvml.vgpuTypeResolver(), Host.of(config.hostRoot())));
        // Names are attributes in DRA mode, not sockets: a rename that would merge devices keeps them all.
        Scanner scanner = new Scanner(host.withStateDirectory(config.stateDir()), sources, live::rules)
                .withNamesAsAttributes();
        Handovers handovers = Handovers.forHost(host, sources);

        AtomicReference<DraDaemon> self = new AtomicReference<>();
        AtomicReference<RescanLoop> rescans = new AtomicReference<>();
        Metrics metrics = new Metrics(() -> self.get() == null ? List.of() : self.get().statuses(),
                () -> rescans.get() == null ? Snapshot.empty() : rescans.get().current(), nvml::available,
                Clock.systemUTC());
        metrics.buildInfo(VgpuDaemon.version(), config.nvmlOptions().pciIdsSource());
        DraMetrics draMetrics = new DraMetrics(metrics, () -> self.get() != null
                && self.get().plugin.registration() instanceof KubeletRegistration.Registered);

        // The publisher first: the plugin hands it the pool (devices and health) from its start on.
        SlicePublisher slices = SlicePublisher.builder(api, dra.driver(), dra.nodeName()).observer(draMetrics)
                .threads(THREADS).start();
        DraPlugin plugin;
        try {
            plugin = DraPlugin.builder(handovers, new ApiClaimReader(api, dra.driver())).driver(dra.driver())
                    .pool(dra.nodeName()).kubeletRoot(dra.kubeletRoot()).cdiDir(dra.cdiDir())
                    .stateDir(config.stateDir()).hostRoot(config.hostRoot())
                    .gpuFaultRecovery(live.xidPolicy().recoverAfter(), nvml::checkGpu).observer(draMetrics)
                    .healthStream(true).devicePool(slices::publish).threads(THREADS).start();
        } catch (IOException | RuntimeException e) {
            slices.close();
            api.close();
            nvml.close();
            throw new CannotStart("cannot start the DRA plugin (sockets under --kubelet-root " + dra.kubeletRoot()
                    + ", CDI specs in --cdi-dir " + dra.cdiDir() + ", the checkpoint in --state-dir "
                    + config.stateDir() + "): " + causes(e), e);
        }
        // What is started from here on is closed again, newest first, when the start fails before the daemon owns it.
        List<AutoCloseable> opened = new ArrayList<>(List.of(nvml, api, slices, plugin));
        DraDaemon daemon;
        try {
            live.onXidPolicy(policy -> {
                nvml.ignoreXids(policy.ignored());
                plugin.recoverGpuFaultsAfter(policy.recoverAfter());
            });
            FailedScans failedScans = new FailedScans(metrics, config.failedScansLimit());
            // Each snapshot to the plugin, whose owner checks its devices and hands the pool to the publisher.
            RescanLoop loop = ScanRounds.loop(scanner, plugin, config.interval(), failedScans, live, nvml);
            opened.add(loop);
            rescans.set(loop);
            Optional<OpsServer> ops = config.metricsAddress().isEmpty() ? Optional.empty() : Optional.of(
                    OpsServer.start(config.metricsAddress().get(), metrics,
                            () -> liveness(loop, config.scanDeadline(), failedScans, plugin, slices),
                            () -> readiness(plugin, slices)));
            daemon = new DraDaemon(nvml, api, plugin, slices, loop, ops);
        } catch (IOException e) {
            closeNewestFirst(opened);
            throw new CannotStart("cannot listen on " + config.metricsAddress().get() + " for metrics and probes: "
                    + e.getMessage() + " (choose another --metrics-address, or an empty one to turn metrics off)", e);
        } catch (RuntimeException | Error e) {
            closeNewestFirst(opened);
            throw e;
        }
        self.set(daemon);
        created.accept(daemon);
        if (!ScanRounds.firstScan(metrics, live, daemon.loop, daemon::isClosed, LOG)) {
            return daemon; // stopped during start: nothing more to start
        }
        Snapshot first = daemon.loop.current();
        LOG.info("DRA mode: {} devices of {} resources in node {}'s pool; {} devices skipped", first.deviceCount(),
                first.resources().size(), dra.nodeName(), first.skipped().size());
        ScanRounds.afterFirstScan(config.interval(), live, nvml, daemon.loop, metrics, daemon.plugin::markGpuUnhealthy,
                daemon::isClosed, LOG);
        return daemon;
    }

    /** The messages of a failure and its causes, without class names, e.g. a class fabric8 could not load. */
    static String causes(Throwable e) {
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

    /** Per resource: devices by health; registered = the kubelet accepted the plugin; serving while running. */
    private List<ResourceStatus> statuses() {
        DraStatus status = plugin.status();
        boolean registered = status.registration() instanceof KubeletRegistration.Registered;
        Set<String> unhealthy = new HashSet<>(status.unhealthyIds());
        List<ResourceStatus> out = new ArrayList<>();
        loop.current().resources().values().forEach(r -> {
            int bad = (int) r.devices().stream().filter(d -> unhealthy.contains(d.id())).count();
            out.add(new ResourceStatus(r.name(), r.devices().size() - bad, bad, registered, true));
        });
        return out;
    }

    /**
     * Why DRA mode is not live: a round stuck past its deadline, too many failed rounds in a row, or a JVM error on a
     * thread of the plugin (its transport included) or of the publisher (docs/RELIABILITY.md, "DRA mode").
     */
    static List<String> liveness(RescanLoop loop, Duration deadline, FailedScans failedScans, DraPlugin plugin,
                                 SlicePublisher slices) {
        List<String> problems = new ArrayList<>(ScanRounds.liveness(loop, deadline, failedScans));
        plugin.status().failure().ifPresent(failure -> problems.add(failure + "; restart the daemon"));
        slices.failure().ifPresent(failure -> problems.add(failure + "; restart the daemon"));
        return problems;
    }

    /**
     * Why DRA mode is not ready: a socket of the plugin is missing (a check found it gone and it could not be served
     * again yet), the kubelet has not accepted the registration yet (or refused it; after a socket was served again it
     * registers anew), or the node's first ResourceSlices are not published yet (README, "Metrics and probes").
     */
    static List<String> readiness(DraPlugin plugin, SlicePublisher slices) {
        List<String> problems = new ArrayList<>();
        DraStatus state = plugin.status();
        state.missingSockets().forEach(socket -> problems.add("the DRA plugin's socket " + socket + " is missing"));
        KubeletRegistration registration = state.registration();
        if (registration instanceof KubeletRegistration.Waiting) {
            problems.add("the kubelet has not registered the DRA plugin yet (its plugin watcher calls "
                    + plugin.registrationSocket() + ")");
        } else if (registration instanceof KubeletRegistration.Rejected rejected) {
            problems.add("the kubelet refused the DRA plugin: " + rejected.error());
        }
        SlicePublisher.Status status = slices.status();
        if (status.generation() == 0) {
            problems.add("no ResourceSlice published yet" + (status.failure() == null ? ""
                    : ": " + status.failure()));
        }
        return problems;
    }

    private synchronized boolean isClosed() {
        return closed;
    }

    /** Stops the loop, NVML, the plugin (its sockets go, its claims stay), the publisher (its slices stay), the client. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        LOG.info("stopping DRA mode: prepared claims and their files stay for the next start");
        ops.ifPresent(OpsServer::close);
        loop.close();
        nvml.close();
        plugin.close();
        slices.close();
        api.close();
        LOG.info("stopped; the DRA plugin's sockets removed");
    }
}
