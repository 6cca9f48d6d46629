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
import dev.vgpu.dra.ApiClaimReader;
import dev.vgpu.dra.ApiServer;
import dev.vgpu.dra.DraHealth;
import dev.vgpu.dra.DraPlugin;
import dev.vgpu.dra.KubeletRegistration;
import dev.vgpu.dra.SlicePublisher;
import dev.vgpu.nvml.RecoveringNvml;
import io.fabric8.kubernetes.client.KubernetesClient;
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
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code serve --mode dra}: the same scan loop as device-plugin mode ({@link Scanner}, {@link RescanLoop},
 * {@link LiveConfig} and {@code SIGHUP}, NVML, the ops server with its probes), but each snapshot goes to the DRA
 * kubelet plugin (what Prepare may hand over), the ResourceSlice publisher and the DRA health checks
 * ({@link DraHealth}, whose unhealthy set becomes the slices' taints). XIDs mark devices through the same
 * {@link XidHealth} as in device-plugin mode. Loaded only in DRA mode, so device-plugin mode loads no fabric8 class.
 *
 * <p>Threads: construction and {@link #close()} run on the caller (main, or the shutdown hook). After start the
 * rescan thread scans and hands each snapshot on ({@link DraPlugin#apply} stores it, the publisher and the health
 * checks only post it to their own threads); the plugin's claims thread answers the kubelet; the NVML watcher only
 * posts marks to the health thread.
 */
final class DraDaemon implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DraDaemon.class);

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
    private final KubernetesClient client;
    private final DraPlugin plugin;
    private final SlicePublisher slices;
    private final DraHealth health;
    private final RescanLoop loop;
    private final Optional<OpsServer> ops;
    private boolean closed;

    private DraDaemon(RecoveringNvml nvml, KubernetesClient client, DraPlugin plugin, SlicePublisher slices,
                      DraHealth health, RescanLoop loop, Optional<OpsServer> ops) {
        this.nvml = nvml;
        this.client = client;
        this.plugin = plugin;
        this.slices = slices;
        this.health = health;
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
        KubernetesClient client;
        try {
            client = ApiServer.connect(dra.kubeconfig());
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
                dra.kubeconfig().map(f -> client.getMasterUrl() + " (kubeconfig " + f + ")")
                        .orElse(client.getMasterUrl() + " (in-cluster)"), config.hostRoot(),
                sources.stream().map(DeviceSource::name).toList(), nvml.description(), config.interval().enabled()
                        ? "every " + GoDurations.format(config.interval().period())
                        : "disabled (devices are discovered once at start)",
                config.nvmlOptions().describePciIds(), config.stateDir(), live.describe());
        Host bare = Host.of(config.hostRoot());
        Host host = bare.withPciIds(config.pciIds()).withVgpuTypes(live.resolverAfter(nvml.vgpuTypeResolver(), bare));
        Scanner scanner = new Scanner(host.withStateDirectory(config.stateDir()), sources, live::rules);
        Handovers handovers = Handovers.forHost(host, sources);

        AtomicReference<DraDaemon> self = new AtomicReference<>();
        AtomicReference<RescanLoop> rescans = new AtomicReference<>();
        Metrics metrics = new Metrics(() -> self.get() == null ? List.of() : self.get().statuses(),
                () -> rescans.get() == null ? Snapshot.empty() : rescans.get().current(), nvml::available,
                Clock.systemUTC());
        metrics.buildInfo(VgpuDaemon.version(), config.nvmlOptions().pciIdsSource());
        DraMetrics draMetrics = new DraMetrics(metrics, () -> self.get() != null
                && self.get().plugin.registration() instanceof KubeletRegistration.Registered);

        DraPlugin plugin;
        try {
            plugin = DraPlugin.builder(handovers, new ApiClaimReader(client, dra.driver())).driver(dra.driver())
                    .pool(dra.nodeName()).kubeletRoot(dra.kubeletRoot()).cdiDir(dra.cdiDir())
                    .stateDir(config.stateDir()).observer(draMetrics).healthStream(true).start();
        } catch (IOException | RuntimeException e) {
            client.close();
            nvml.close();
            throw new CannotStart("cannot start the DRA plugin (sockets under --kubelet-root " + dra.kubeletRoot()
                    + ", CDI specs in --cdi-dir " + dra.cdiDir() + ", the checkpoint in --state-dir "
                    + config.stateDir() + "): " + causes(e), e);
        }
        // What is started from here on is closed again, newest first, when the start fails before the daemon owns it.
        List<AutoCloseable> opened = new ArrayList<>(List.of(nvml, client, plugin));
        DraDaemon daemon;
        try {
            SlicePublisher slices = SlicePublisher.builder(client, dra.driver(), dra.nodeName()).observer(draMetrics)
                    .start();
            opened.add(slices);
            DraHealth health = new DraHealth(handovers, config.hostRoot(), nvml::checkGpu,
                    live.xidPolicy().recoverAfter(), unhealthy -> {
                        // The same set becomes the slices' taints and the kubelet's health stream.
                        slices.health(unhealthy.keySet());
                        plugin.health(unhealthy);
                    }).start();
            opened.add(health);
            live.onXidPolicy(policy -> {
                nvml.ignoreXids(policy.ignored());
                health.recoverAfter(policy.recoverAfter());
            });
            FailedScans failedScans = new FailedScans(metrics, config.failedScansLimit());
            // Each snapshot: Prepare's devices (stored at once), then the slices and the health checks (posted).
            RescanLoop loop = ScanRounds.loop(scanner, (next, plan) -> {
                plugin.apply(next, plan);
                slices.publish(next);
                health.apply(next);
            }, config.interval(), failedScans, live, nvml);
            opened.add(loop);
            rescans.set(loop);
            Optional<OpsServer> ops = config.metricsAddress().isEmpty() ? Optional.empty() : Optional.of(
                    OpsServer.start(config.metricsAddress().get(), metrics,
                            () -> ScanRounds.liveness(loop, config.scanDeadline(), failedScans),
                            () -> readiness(plugin, slices)));
            daemon = new DraDaemon(nvml, client, plugin, slices, health, loop, ops);
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
        ScanRounds.afterFirstScan(config.interval(), live, nvml, daemon.loop, metrics, daemon.health::markGpuUnhealthy,
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
        boolean registered = plugin.registration() instanceof KubeletRegistration.Registered;
        Set<String> unhealthy = new HashSet<>(health.unhealthyIds());
        List<ResourceStatus> out = new ArrayList<>();
        loop.current().resources().values().forEach(r -> {
            int bad = (int) r.devices().stream().filter(d -> unhealthy.contains(d.id())).count();
            out.add(new ResourceStatus(r.name(), r.devices().size() - bad, bad, registered, true));
        });
        return out;
    }

    /**
     * Why DRA mode is not ready: the kubelet has not accepted the registration yet (or refused it), or the node's
     * first ResourceSlices are not published yet (README, "Metrics and probes").
     */
    static List<String> readiness(DraPlugin plugin, SlicePublisher slices) {
        List<String> problems = new ArrayList<>();
        KubeletRegistration registration = plugin.registration();
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

    /** Stops the loop, NVML, the health checks, the publisher (its slices stay) and the plugin (its sockets go). */
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
        health.close();
        slices.close();
        plugin.close();
        client.close();
        LOG.info("stopped; the DRA plugin's sockets removed");
    }
}
