package dev.vgpu.deviceplugin;

import dev.vgpu.core.PciAddress;
import java.util.Optional;

/**
 * Whether a physical GPU still answers its driver, asked before a GPU that an XID marked unhealthy is made healthy
 * again ({@link PluginManager.Builder#gpuFaultRecovery}). The daemon asks NVML (the GPU's handle by PCI bus id and its
 * PCI info).
 *
 * <p>Called on the manager's fault lane, outside its serial context, one call at a time; it may block briefly (a
 * native call), never for long.
 */
@FunctionalInterface
public interface GpuProbe {

    /** Trusts every GPU: recovery needs only the quiet period. */
    GpuProbe TRUSTING = gpu -> Optional.empty();

    /**
     * Asks whether the GPU answers now.
     *
     * @param gpu the physical GPU
     * @return empty when it answers; otherwise why not, in words (for the log)
     */
    Optional<String> check(PciAddress gpu);
}
