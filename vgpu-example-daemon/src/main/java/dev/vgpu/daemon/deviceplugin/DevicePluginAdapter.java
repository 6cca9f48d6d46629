package dev.vgpu.daemon.deviceplugin;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Plan;
import dev.vgpu.core.Snapshot;
import dev.vgpu.daemon.agent.NodeAdapter;
import dev.vgpu.daemon.ops.ResourceGauge;
import dev.vgpu.deviceplugin.PluginManager;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The default mode: the node's devices as extended resources, one kubelet device plugin per resource, served and
 * registered by vgpu-deviceplugin's {@link PluginManager} (Allocate, health, kubelet restarts are the library's). The
 * adapter only hands it snapshots and GPU faults and reads its status for the probes and gauges.
 *
 * <p>Threads: {@link #apply} runs on the agent's thread (into the manager's context, then the shutdown of removed
 * servers on this thread); every other call returns at once (the manager only posts) and reads what the manager
 * publishes.
 */
public final class DevicePluginAdapter implements NodeAdapter {

    private static final Logger LOG = LoggerFactory.getLogger(DevicePluginAdapter.class);

    private final PluginManager plugins;

    /** Adapts a running manager (package-private: the opener makes it; tests hand one in). */
    DevicePluginAdapter(PluginManager plugins) {
        this.plugins = plugins;
    }

    /** Serves the kubelet's device-plugin API in {@code devicePluginDir}, where {@code kubelet.sock} is. */
    public static Opener opener(Path devicePluginDir) {
        return new Opener() {
            @Override
            public String describe() {
                return "device-plugin dir " + devicePluginDir;
            }

            @Override
            public NodeAdapter open(Context context) throws IOException {
                // A GPU an XID marked recovers after health.xid.recoverAfter without another counted XID, if NVML
                // answers for it.
                return new DevicePluginAdapter(PluginManager.builder().hostRoot(context.host().root())
                        .hostFiles(context.host().files()).devicePluginDir(devicePluginDir).sources(context.sources())
                        .observer(context.metrics()).gpuFaultRecovery(context.gpuFaultRecovery(), context.gpuProbe())
                        .build());
            }
        };
    }

    @Override
    public void apply(Snapshot next, Plan plan) {
        plugins.apply(next, plan);
    }

    @Override
    public void markGpuUnhealthy(PciAddress gpu, OptionalInt gpuInstance, String reason) {
        plugins.markGpuUnhealthy(gpu, gpuInstance, reason);
    }

    @Override
    public void recoverGpuFaultsAfter(Duration quiet) {
        plugins.recoverGpuFaultsAfter(quiet);
    }

    @Override
    public List<ResourceGauge> resources() {
        return plugins.status().stream().map(s -> new ResourceGauge(s.name().fullName(), s.healthy(), s.unhealthy(),
                s.registered(), s.serving())).toList();
    }

    /** A plugin that cannot serve, or a gRPC transport that lost a call to a JVM error (docs/RELIABILITY.md). */
    @Override
    public List<String> notLive() {
        List<String> problems = new ArrayList<>();
        plugins.status().stream().filter(s -> !s.serving()).forEach(s -> problems.add(
                "the device plugin of " + s.name().fullName() + " is not serving on its socket"));
        plugins.transportFailure().ifPresent(failure -> problems.add(failure + "; restart the daemon"));
        return problems;
    }

    /**
     * The kubelet's socket is missing (the kubelet is down or restarting, so nothing can be allocated), or an
     * advertised resource is not registered with the kubelet.
     */
    @Override
    public List<String> notReady() {
        List<String> problems = new ArrayList<>();
        if (!plugins.kubeletSocketPresent()) {
            problems.add("the kubelet's socket " + plugins.kubeletSocket() + " is missing: the kubelet is down or"
                    + " restarting (the resources stay served and register again once it is back)");
        }
        plugins.status().stream().filter(s -> !s.registered()).forEach(s -> problems.add(
                s.name().fullName() + " is not registered with the kubelet"));
        return problems;
    }

    @Override
    public String served(Snapshot first) {
        return "serving " + first.resources().size() + " resources with " + first.deviceCount() + " devices; "
                + first.skipped().size() + " devices skipped";
    }

    /** Stops every plugin: their sockets are deleted. */
    @Override
    public void close() {
        plugins.close();
        LOG.info("stopped; every plugin socket removed");
    }
}
