package dev.vgpu.daemon.agent;

import dev.vgpu.attach.GpuFaults;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.SnapshotSink;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Host;
import dev.vgpu.daemon.ops.Metrics;
import dev.vgpu.daemon.ops.ResourceGauge;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;

/**
 * How the node offers what the {@link NodeAgent} finds: the kubelet's device-plugin API, or a DRA kubelet plugin with
 * its ResourceSlices. The agent hands it every changed snapshot ({@link SnapshotSink#apply}, on the agent's thread),
 * the GPU faults NVML reports (on the XID watcher's thread) and a new fault-recovery period after a {@code SIGHUP};
 * it answers what the probes and gauges ask (on the ops server's thread), and closes last of what the agent started.
 * An adapter does its own blocking work on its own threads: every call here returns at once.
 */
public interface NodeAdapter extends SnapshotSink, AutoCloseable {

    /** Marks every device on {@code gpu} (on its GPU instance only, when given) unhealthy; returns at once. */
    void markGpuUnhealthy(PciAddress gpu, OptionalInt gpuInstance, String reason);

    /** A GPU marked unhealthy recovers after {@code quiet} without another mark; zero never. */
    void recoverGpuFaultsAfter(Duration quiet);

    /** Per resource: devices by health, registered, serving (for the gauges); must not block. */
    List<ResourceGauge> resources();

    /** Why the adapter makes the node not live ({@code /healthz}); empty when it is. Must not block. */
    List<String> notLive();

    /** Why the node is not ready ({@code /readyz}); empty when it is. Must not block. */
    List<String> notReady();

    /** One log line once the first scan is served: what the node offers now. */
    String served(Snapshot first);

    /** Stops serving (sockets removed; what must survive a restart, such as checkpoints, stays). */
    @Override
    void close();

    /**
     * Makes the adapter of a mode once the agent has what it needs: called on the starting thread, after NVML's first
     * attempt began and before the first scan.
     */
    interface Opener {

        /** What the adapter serves where, for the agent's start line (e.g. {@code device-plugin dir ...}). */
        String describe();

        /**
         * Whether resource names are attributes of each device (DRA) rather than one socket each (the device plugin):
         * then a rename that would put devices of two sources or attachments under one name keeps each under its own
         * ({@link dev.vgpu.core.spi.Scanner#withNamesAsAttributes()}), so that no rename withdraws a device.
         */
        default boolean namesAreAttributes() {
            return false;
        }

        /**
         * The adapter, serving (its sockets bound, nothing advertised yet).
         *
         * @throws CannotStart in words, for an exit 2 (a socket that cannot be bound, an unusable kubeconfig)
         * @throws IOException when it cannot start for a reason of the machine
         */
        NodeAdapter open(Context context) throws IOException;
    }

    /**
     * What the agent gives an adapter it opens.
     *
     * @param host             the host the scanner reads (root, reader, names), for the adapter's re-checks
     * @param sources          the sources that find the devices (their re-checks)
     * @param metrics          the daemon's metrics: an observer of the adapter's calls, and the registry for its own
     * @param gpuProbe         asks NVML whether a GPU answers again (fault recovery)
     * @param gpuFaultRecovery a GPU marked unhealthy recovers after this long without another mark; zero never
     */
    record Context(Host host, List<DeviceSource> sources, Metrics metrics, GpuFaults.Probe gpuProbe,
                   Duration gpuFaultRecovery) {
        /** Copies the sources. */
        public Context {
            sources = List.copyOf(sources);
        }
    }
}
