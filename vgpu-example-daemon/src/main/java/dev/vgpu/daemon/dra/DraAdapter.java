package dev.vgpu.daemon.dra;

import dev.vgpu.attach.Handovers;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Plan;
import dev.vgpu.core.Snapshot;
import dev.vgpu.daemon.agent.CannotStart;
import dev.vgpu.daemon.agent.NodeAdapter;
import dev.vgpu.daemon.agent.NodeAgent;
import dev.vgpu.daemon.ops.ResourceGauge;
import dev.vgpu.dra.DraPlugin;
import dev.vgpu.dra.DraStatus;
import dev.vgpu.dra.DriverName;
import dev.vgpu.dra.KubeletRegistration;
import dev.vgpu.dra.apiserver.ApiClaimReader;
import dev.vgpu.dra.apiserver.ApiServer;
import dev.vgpu.dra.apiserver.SlicePublisher;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code serve --mode dra}: the node's devices offered through the DRA kubelet plugin of vgpu-dra and the
 * ResourceSlice publisher of vgpu-dra-apiserver, a thin wrapper of their public API. Each snapshot goes to the plugin,
 * whose one owner keeps the devices, their health (the device plugin's checks and XID policy) and the prepared claims,
 * and hands the pool to the publisher (the unhealthy devices become the slices' taints); GPU faults go to the plugin
 * too. The plugin owns its sockets' checks and its lock on the kubelet root; the daemon keeps only its state-directory
 * lock. This package is the only one of the daemon that names vgpu-dra or fabric8, so device-plugin mode never
 * reaches them (ArchitectureTest).
 *
 * <p>Threads: {@link #open} and {@link #close()} run on the agent's caller; {@link #apply} on the agent's thread
 * (it returns once the plugin's owner took the snapshot); every thread of the plugin, the publisher and the API client
 * comes from {@link #THREADS}; a GPU fault only posts to the plugin's owner; the probes and gauges read published
 * status values.
 */
public final class DraAdapter implements NodeAdapter {

    private static final Logger LOG = LoggerFactory.getLogger(DraAdapter.class);
    /** Makes every thread of the DRA plugin, the slice publisher and the API client (plain daemon threads). */
    static final ThreadFactory THREADS = Thread::new;

    /**
     * What the DRA mode runs with, checked.
     *
     * @param driver      the driver name
     * @param kubeletRoot the kubelet's root (its plugin registry and plugin directories)
     * @param nodeName    this node, the pool name of its slices
     * @param cdiDir      where per-claim CDI specs go
     * @param kubeconfig  the API server's kubeconfig; empty = in-cluster
     * @param stateDir    the prepared-claims checkpoint
     */
    public record Settings(DriverName driver, Path kubeletRoot, String nodeName, Path cdiDir,
                           Optional<Path> kubeconfig, Path stateDir) {
        /** Checks that nothing is missing. */
        public Settings {
            Objects.requireNonNull(driver, "driver");
            Objects.requireNonNull(kubeletRoot, "kubeletRoot");
            Objects.requireNonNull(nodeName, "nodeName");
            Objects.requireNonNull(cdiDir, "cdiDir");
            Objects.requireNonNull(kubeconfig, "kubeconfig");
            Objects.requireNonNull(stateDir, "stateDir");
        }
    }

    private final Settings settings;
    private final ApiServer api;
    private final DraPlugin plugin;
    private final SlicePublisher slices;
    /** The snapshot the plugin serves now; written on the agent's thread, read by the gauges. */
    private volatile Snapshot current = Snapshot.empty();

    private DraAdapter(Settings settings, ApiServer api, DraPlugin plugin, SlicePublisher slices) {
        this.settings = settings;
        this.api = api;
        this.plugin = plugin;
        this.slices = slices;
    }

    /** Opens the DRA mode with {@code settings}: connects, starts the publisher, serves both plugin sockets. */
    public static Opener opener(Settings settings) {
        return new Opener() {
            @Override
            public String describe() {
                return "DRA driver " + settings.driver() + ", node " + settings.nodeName() + ", kubelet root "
                        + settings.kubeletRoot() + ", CDI dir " + settings.cdiDir() + ", API server "
                        + settings.kubeconfig().map(f -> "of kubeconfig " + f).orElse("in-cluster");
            }

            /** Names are attributes in DRA mode, not sockets: a rename that would merge devices keeps them all. */
            @Override
            public boolean namesAreAttributes() {
                return true;
            }

            @Override
            public NodeAdapter open(Context context) {
                return DraAdapter.open(settings, context);
            }
        };
    }

    private static DraAdapter open(Settings settings, Context context) {
        ApiServer api;
        try {
            api = ApiServer.connect(settings.kubeconfig(), THREADS);
        } catch (IOException | RuntimeException e) {
            LOG.debug("cannot build the API server client", e);
            throw new CannotStart(settings.kubeconfig().map(f -> "the kubeconfig " + f).orElse("the in-cluster API"
                    + " server configuration") + " cannot be used: " + NodeAgent.causes(e), e);
        }
        LOG.info("DRA mode: API server {}", api.masterUrl()
                + settings.kubeconfig().map(f -> " (kubeconfig " + f + ")").orElse(" (in-cluster)"));
        DraMetrics metrics = new DraMetrics(context.metrics());
        SlicePublisher slices = null;
        DraPlugin plugin;
        try {
            // The publisher first: the plugin hands it the pool (devices and health) from its start on.
            slices = SlicePublisher.builder(api, settings.driver(), settings.nodeName()).observer(metrics)
                    .threads(THREADS).start();
            plugin = DraPlugin.builder(Handovers.forHost(context.host(), context.sources()),
                            new ApiClaimReader(api, settings.driver()))
                    .driver(settings.driver()).pool(settings.nodeName()).kubeletRoot(settings.kubeletRoot())
                    .cdiDir(settings.cdiDir()).stateDir(settings.stateDir()).hostRoot(context.host().root())
                    .gpuFaultRecovery(context.gpuFaultRecovery(), context.gpuProbe()).observer(metrics)
                    .healthStream(true).devicePool(slices::publish).threads(THREADS).start();
        } catch (IOException | RuntimeException e) {
            // Any failure here, the kubelet root's lock held by another daemon included, is an exit 2.
            if (slices != null) {
                slices.close();
            }
            api.close();
            throw new CannotStart("cannot start the DRA plugin (sockets under --kubelet-root "
                    + settings.kubeletRoot() + ", CDI specs in --cdi-dir " + settings.cdiDir()
                    + ", the checkpoint in --state-dir " + settings.stateDir() + "): " + NodeAgent.causes(e), e);
        }
        metrics.readRegistration(() -> plugin.registration() instanceof KubeletRegistration.Registered);
        return new DraAdapter(settings, api, plugin, slices);
    }

    /** To the plugin's owner, which checks the devices and hands the pool to the publisher. */
    @Override
    public void apply(Snapshot next, Plan plan) {
        plugin.apply(next, plan);
        current = next;
    }

    @Override
    public void markGpuUnhealthy(PciAddress gpu, OptionalInt gpuInstance, String reason) {
        plugin.markGpuUnhealthy(gpu, gpuInstance, reason);
    }

    @Override
    public void recoverGpuFaultsAfter(Duration quiet) {
        plugin.recoverGpuFaultsAfter(quiet);
    }

    /** Per resource: devices by health; registered = the kubelet accepted the plugin; serving while running. */
    @Override
    public List<ResourceGauge> resources() {
        DraStatus status = plugin.status();
        boolean registered = status.registration() instanceof KubeletRegistration.Registered;
        Set<String> unhealthy = new HashSet<>(status.unhealthyIds());
        List<ResourceGauge> out = new ArrayList<>();
        current.resources().values().forEach(r -> {
            int bad = (int) r.devices().stream().filter(d -> unhealthy.contains(d.id())).count();
            out.add(new ResourceGauge(r.name().fullName(), r.devices().size() - bad, bad, registered, true));
        });
        return out;
    }

    /**
     * Why DRA mode is not live beyond the agent's own reasons: a JVM error on a thread of the plugin (its transport
     * included) or of the publisher (docs/RELIABILITY.md, "DRA mode").
     */
    @Override
    public List<String> notLive() {
        List<String> problems = new ArrayList<>();
        plugin.status().failure().ifPresent(failure -> problems.add(failure + "; restart the daemon"));
        slices.failure().ifPresent(failure -> problems.add(failure + "; restart the daemon"));
        return problems;
    }

    /**
     * Why DRA mode is not ready: a socket of the plugin is missing (a check found it gone and it could not be served
     * again yet), the kubelet has not accepted the registration yet (or refused it; after a socket was served again it
     * registers anew), or the node's first ResourceSlices are not published yet (README, "Metrics and probes").
     */
    @Override
    public List<String> notReady() {
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

    @Override
    public String served(Snapshot first) {
        return "DRA mode: " + first.deviceCount() + " devices of " + first.resources().size() + " resources in node "
                + settings.nodeName() + "'s pool; " + first.skipped().size() + " devices skipped";
    }

    /** Stops the plugin (its sockets go, its claims stay), the publisher (its slices stay), then the client. */
    @Override
    public void close() {
        LOG.info("stopping DRA mode: prepared claims and their files stay for the next start");
        plugin.close();
        slices.close();
        api.close();
        LOG.info("stopped; the DRA plugin's sockets removed");
    }
}
