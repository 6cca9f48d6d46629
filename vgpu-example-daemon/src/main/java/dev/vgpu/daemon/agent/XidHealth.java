package dev.vgpu.daemon.agent;

import dev.vgpu.core.PciAddress;
import dev.vgpu.daemon.ops.Metrics;
import dev.vgpu.nvml.XidEvent;
import dev.vgpu.nvml.XidListener;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * What an XID event does in the daemon: every one is counted ({@code vgpu_xid_events_total}, ignored XIDs too), and a
 * counted one marks the devices of its GPU unhealthy (of its GPU instance only, when NVML named one), which starts the
 * GPU's quiet period again; an ignored one marks nothing, so it never delays a recovery either.
 *
 * <p>Threads: called on the XID watcher's thread; the metrics are thread-safe and a mark only posts to the plugin
 * manager.
 */
final class XidHealth implements XidListener {

    /** Where marks go: the adapter's {@link NodeAdapter#markGpuUnhealthy}, which only posts. */
    @FunctionalInterface
    interface Marks {
        void markGpuUnhealthy(PciAddress gpu, OptionalInt gpuInstance, String reason);
    }

    private final Metrics metrics;
    private final Marks marks;

    XidHealth(Metrics metrics, Marks marks) {
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        this.marks = Objects.requireNonNull(marks, "marks");
    }

    @Override
    public void onXid(PciAddress gpu, long xid) {
        onXidEvent(new XidEvent(xid, java.util.Optional.of(gpu), java.util.List.of(gpu), OptionalInt.empty(), true));
    }

    @Override
    public void onXidEvent(XidEvent event) {
        metrics.xid(event);
        if (!event.counted()) {
            return;
        }
        // An instance is only meaningful on the GPU NVML named; an event it could not attribute concerns every GPU.
        OptionalInt instance = event.gpu().isPresent() ? event.gpuInstance() : OptionalInt.empty();
        for (PciAddress gpu : event.gpus()) {
            marks.markGpuUnhealthy(gpu, instance, "critical XID " + event.xid());
        }
    }
}
