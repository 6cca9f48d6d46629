package dev.vgpu.deviceplugin;

import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The GPU faults reported by NVML (XIDs) and their effect on the plugins.
 *
 * <p>Threads: owned by the manager's context (docs/ARCHITECTURE.md, "Threads and mutable state"). The manager lists
 * a GPU's VFs in sysfs outside the context, on its fault lane, in the order the marks were made, and posts the
 * marks here with the result.
 */
final class GpuFaults {

    private static final Logger LOG = LoggerFactory.getLogger(GpuFaults.class);

    /** Physical GPU → the functions marked for it (itself and its VFs). */
    private final Map<PciAddress, Set<PciAddress>> functionsOf = new HashMap<>();
    /** Faulty function → reason. */
    private final Map<PciAddress, String> faulty = new HashMap<>();

    /** Whether the device is, or lives on, a GPU with a fault reported now. */
    boolean faulty(Device device) {
        return !faulty.isEmpty() && faulty.keySet().stream().anyMatch(g -> AdvertisedDevices.belongsTo(device, g));
    }

    /** Marks the GPU's devices, and those on its VFs {@code vfs}, unhealthy until {@link #markHealthy}. */
    void markUnhealthy(PciAddress gpu, List<PciAddress> vfs, String reason, Collection<ResourcePlugin> plugins) {
        // NVML names the physical GPU; on Ampere SR-IOV hosts an mdev's parent is one of its VFs.
        Set<PciAddress> functions = new TreeSet<>(functionsOf.getOrDefault(gpu, Set.of()));
        functions.add(gpu);
        functions.addAll(vfs);
        functionsOf.put(gpu, Set.copyOf(functions));
        functions.forEach(f -> faulty.put(f, reason == null ? "" : reason));
        SortedSet<String> affected = new TreeSet<>();
        for (PciAddress function : functions) {
            for (ResourcePlugin plugin : plugins) {
                if (plugin.gpuFault(function, true)) {
                    affected.add(plugin.name().fullName());
                }
            }
        }
        LOG.warn("GPU {} reported a fault ({}): its devices in {} are unhealthy", gpu, reason, affected);
    }

    /** Clears a fault set by {@link #markUnhealthy}. */
    void markHealthy(PciAddress gpu, Collection<ResourcePlugin> plugins) {
        Set<PciAddress> functions = functionsOf.remove(gpu);
        if (functions == null) {
            return;
        }
        functions.forEach(faulty::remove);
        for (PciAddress function : functions) {
            plugins.forEach(p -> p.gpuFault(function, false));
        }
        LOG.info("GPU {} fault cleared", gpu);
    }
}
