package dev.vgpu.deviceplugin;

import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The GPU faults reported by NVML (XIDs) and their effect on the plugins: the one owner of that state.
 *
 * <p>Threads: {@link #markUnhealthy} and {@link #markHealthy} may be called from any thread (the XID watcher's
 * callback among them) and never block: they queue the change, and queued changes run one at a time, in order,
 * on the manager's scheduler, where the sysfs read of a GPU's VFs happens, with no lock held. {@code functionsOf}
 * is touched only by those queued changes (one at a time); {@code faulty} is republished as an immutable map for
 * any reader ({@link #faulty(Device)}, called when plugins build device health).
 */
final class GpuFaults {

    private static final Logger LOG = LoggerFactory.getLogger(GpuFaults.class);

    private final HostFiles files;
    private final Supplier<Collection<ResourcePlugin>> plugins;
    private final Executor executor;
    private final ConcurrentLinkedQueue<Runnable> queue = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean draining = new AtomicBoolean();
    /** Physical GPU → the functions marked for it (itself and its VFs); only the queued changes touch it. */
    private final Map<PciAddress, Set<PciAddress>> functionsOf = new HashMap<>();
    /** Faulty function → reason; immutable, replaced as a whole. */
    private volatile Map<PciAddress, String> faulty = Map.of();

    GpuFaults(HostFiles files, Supplier<Collection<ResourcePlugin>> plugins, Executor executor) {
        this.files = files;
        this.plugins = plugins;
        this.executor = executor;
    }

    /** Whether the device is, or lives on, a GPU with a fault reported now. */
    boolean faulty(Device device) {
        Map<PciAddress, String> now = faulty;
        return !now.isEmpty() && now.keySet().stream().anyMatch(g -> AdvertisedDevices.belongsTo(device, g));
    }

    /** Queues: mark the GPU's devices (and those on its VFs) unhealthy until {@link #markHealthy}. */
    void markUnhealthy(PciAddress gpu, String reason) {
        enqueue(() -> {
            // NVML names the physical GPU; on Ampere SR-IOV hosts an mdev's parent is one of its VFs.
            Set<PciAddress> functions = new TreeSet<>(functionsOf.getOrDefault(gpu, Set.of()));
            functions.add(gpu);
            functions.addAll(files.virtualFunctions(gpu));
            functionsOf.put(gpu, Set.copyOf(functions));
            Map<PciAddress, String> next = new HashMap<>(faulty);
            functions.forEach(f -> next.put(f, reason == null ? "" : reason));
            faulty = Map.copyOf(next);
            SortedSet<String> affected = new TreeSet<>();
            for (PciAddress function : functions) {
                for (ResourcePlugin plugin : plugins.get()) {
                    if (plugin.gpuFault(function, true)) {
                        affected.add(plugin.name().fullName());
                    }
                }
            }
            LOG.warn("GPU {} reported a fault ({}): its devices in {} are unhealthy", gpu, reason, affected);
        });
    }

    /** Queues: clear a fault set by {@link #markUnhealthy}. */
    void markHealthy(PciAddress gpu) {
        enqueue(() -> {
            Set<PciAddress> functions = functionsOf.remove(gpu);
            if (functions == null) {
                return;
            }
            Map<PciAddress, String> next = new HashMap<>(faulty);
            functions.forEach(next::remove);
            faulty = Map.copyOf(next);
            for (PciAddress function : functions) {
                plugins.get().forEach(p -> p.gpuFault(function, false));
            }
            LOG.info("GPU {} fault cleared", gpu);
        });
    }

    private void enqueue(Runnable change) {
        queue.add(change);
        drainSoon();
    }

    /** Runs queued changes one at a time on the executor; at most one drain is scheduled at once. */
    private void drainSoon() {
        if (queue.isEmpty() || !draining.compareAndSet(false, true)) {
            return;
        }
        try {
            executor.execute(Guarded.task("GPU fault update", () -> {
                try {
                    for (Runnable change = queue.poll(); change != null; change = queue.poll()) {
                        change.run();
                    }
                } finally {
                    draining.set(false);
                    drainSoon();
                }
            }));
        } catch (RejectedExecutionException e) {
            draining.set(false); // the manager is closing; the faults no longer matter
            queue.clear();
        }
    }
}
