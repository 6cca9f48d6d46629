package dev.vgpu.daemon.dra;

import dev.vgpu.attach.Handovers;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Plan;
import dev.vgpu.core.Snapshot;
import dev.vgpu.daemon.agent.CannotStart;
import dev.vgpu.daemon.agent.NodeAdapter;
import dev.vgpu.daemon.agent.NodeAgent;
import dev.vgpu.daemon.ops.ResourceGauge;
import dev.vgpu.dra.ApiClaimReader;
import dev.vgpu.dra.ApiServer;
import dev.vgpu.dra.DraHealth;
import dev.vgpu.dra.DraPlugin;
import dev.vgpu.dra.DriverName;
import dev.vgpu.dra.KubeletRegistration;
import dev.vgpu.dra.SlicePublisher;
import io.fabric8.kubernetes.client.KubernetesClient;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code serve --mode dra}: the node's devices offered through the DRA kubelet plugin of vgpu-dra, a thin wrapper of
 * its public API. Each snapshot goes to the plugin (what Prepare may hand over), the ResourceSlice publisher and the
 * DRA health checks ({@link DraHealth}, whose unhealthy set becomes the slices' taints and the kubelet's health
 * stream); GPU faults go to the health checks. This package is the only one of the daemon that names vgpu-dra or
 * fabric8, so device-plugin mode never reaches them (ArchitectureTest).
 *
 * <p>Threads: {@link #open} and {@link #close()} run on the agent's caller; {@link #apply} on the agent's thread
 * ({@link DraPlugin#apply} stores the snapshot, the publisher and the health checks only post it to their own
 * threads); the plugin's claims thread answers the kubelet; a GPU fault only posts to the health thread; the probes
 * read published values.
 */
public final class DraAdapter implements NodeAdapter {

    private static final Logger LOG = LoggerFactory.getLogger(DraAdapter.class);

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
    private final KubernetesClient client;
    private final DraPlugin plugin;
    private final SlicePublisher slices;
    private final DraHealth health;
    /** The snapshot the plugin serves now; written on the agent's thread, read by the gauges. */
    private volatile Snapshot current = Snapshot.empty();

    private DraAdapter(Settings settings, KubernetesClient client, DraPlugin plugin, SlicePublisher slices,
                       DraHealth health) {
        this.settings = settings;
        this.client = client;
        this.plugin = plugin;
        this.slices = slices;
        this.health = health;
    }

    /** Opens the DRA mode with {@code settings}: connects, serves both plugin sockets, starts the publisher. */
    public static Opener opener(Settings settings) {
        return new Opener() {
            @Override
            public String describe() {
                return "DRA driver " + settings.driver() + ", node " + settings.nodeName() + ", kubelet root "
                        + settings.kubeletRoot() + ", CDI dir " + settings.cdiDir() + ", API server "
                        + settings.kubeconfig().map(f -> "of kubeconfig " + f).orElse("in-cluster");
            }

            @Override
            public NodeAdapter open(Context context) {
                return DraAdapter.open(settings, context);
            }
        };
    }

    private static DraAdapter open(Settings settings, Context context) {
        KubernetesClient client;
        try {
            client = ApiServer.connect(settings.kubeconfig());
        } catch (IOException | RuntimeException e) {
            LOG.debug("cannot build the API server client", e);
            throw new CannotStart(settings.kubeconfig().map(f -> "the kubeconfig " + f).orElse("the in-cluster API"
                    + " server configuration") + " cannot be used: " + NodeAgent.causes(e), e);
        }
        LOG.info("DRA mode: API server {}", client.getMasterUrl());
        Handovers handovers = Handovers.forHost(context.host(), context.sources());
        DraMetrics metrics = new DraMetrics(context.metrics());
        List<AutoCloseable> opened = new ArrayList<>(List.of(client));
        try {
            DraPlugin plugin = DraPlugin.builder(handovers, new ApiClaimReader(client, settings.driver()))
                    .driver(settings.driver()).pool(settings.nodeName()).kubeletRoot(settings.kubeletRoot())
                    .cdiDir(settings.cdiDir()).stateDir(settings.stateDir()).observer(metrics).healthStream(true)
                    .start();
            opened.add(plugin);
            metrics.readRegistration(() -> plugin.registration() instanceof KubeletRegistration.Registered);
            SlicePublisher slices = SlicePublisher.builder(client, settings.driver(), settings.nodeName())
                    .observer(metrics).start();
            opened.add(slices);
            DraHealth health = new DraHealth(handovers, context.host().root(), context.gpuProbe(),
                    context.gpuFaultRecovery(), unhealthy -> {
                        // The same set becomes the slices' taints and the kubelet's health stream.
                        slices.health(unhealthy.keySet());
                        plugin.health(unhealthy);
                    }).start();
            return new DraAdapter(settings, client, plugin, slices, health);
        } catch (IOException | RuntimeException e) {
            for (int i = opened.size() - 1; i >= 0; i--) {
                try {
                    opened.get(i).close();
                } catch (Exception closing) {
                    LOG.warn("Closing after a failed start: {}", closing.toString());
                }
            }
            throw new CannotStart("cannot start the DRA plugin (sockets under --kubelet-root "
                    + settings.kubeletRoot() + ", CDI specs in --cdi-dir " + settings.cdiDir()
                    + ", the checkpoint in --state-dir " + settings.stateDir() + "): " + NodeAgent.causes(e), e);
        }
    }

    /** Prepare's devices (stored at once), then the slices and the health checks (posted). */
    @Override
    public void apply(Snapshot next, Plan plan) {
        plugin.apply(next, plan);
        slices.publish(next);
        health.apply(next);
        current = next;
    }

    @Override
    public void markGpuUnhealthy(PciAddress gpu, OptionalInt gpuInstance, String reason) {
        health.markGpuUnhealthy(gpu, gpuInstance, reason);
    }

    @Override
    public void recoverGpuFaultsAfter(Duration quiet) {
        health.recoverAfter(quiet);
    }

    /** Per resource: devices by health; registered = the kubelet accepted the plugin; serving while running. */
    @Override
    public List<ResourceGauge> resources() {
        boolean registered = plugin.registration() instanceof KubeletRegistration.Registered;
        Set<String> unhealthy = new HashSet<>(health.unhealthyIds());
        List<ResourceGauge> out = new ArrayList<>();
        current.resources().values().forEach(r -> {
            int bad = (int) r.devices().stream().filter(d -> unhealthy.contains(d.id())).count();
            out.add(new ResourceGauge(r.name().fullName(), r.devices().size() - bad, bad, registered, true));
        });
        return out;
    }

    @Override
    public List<String> notLive() {
        return List.of();
    }

    /**
     * Why DRA mode is not ready: the kubelet has not accepted the registration yet (or refused it), or the node's
     * first ResourceSlices are not published yet (README, "Metrics and probes").
     */
    @Override
    public List<String> notReady() {
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

    @Override
    public String served(Snapshot first) {
        return "DRA mode: " + first.deviceCount() + " devices of " + first.resources().size() + " resources in node "
                + settings.nodeName() + "'s pool; " + first.skipped().size() + " devices skipped";
    }

    /** Stops the health checks, the publisher (its slices stay) and the plugin (its sockets go), then the client. */
    @Override
    public void close() {
        LOG.info("stopping DRA mode: prepared claims and their files stay for the next start");
        health.close();
        slices.close();
        plugin.close();
        client.close();
        LOG.info("stopped; the DRA plugin's sockets removed");
    }
}
