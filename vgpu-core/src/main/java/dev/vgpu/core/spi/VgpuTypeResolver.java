package dev.vgpu.core.spi;

import dev.vgpu.core.PciAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Names the vGPU types a physical GPU supports when sysfs cannot (every card fully consumed). The
 * {@code vgpu-nvml} module implements it with NVML; {@link #none()} is the null object.
 *
 * <p>Type ids are card-local: an answer for one physical function must never be used for another.
 */
public interface VgpuTypeResolver {

    /**
     * The supported types of one physical GPU.
     *
     * @param physicalFunction the PF's sysfs address
     * @return the names; {@link VgpuTypeNames#unavailable(String)} when the resolver is not in use, or
     *         {@link VgpuTypeNames#failed(String)} when it is but could not answer this time; never throws
     */
    VgpuTypeNames supportedTypes(PciAddress physicalFunction);

    /** A resolver that knows nothing, with a reason saying so. */
    static VgpuTypeResolver none() {
        return pf -> VgpuTypeNames.unavailable("no vGPU type resolver configured (NVML not in use)");
    }

    /**
     * A view that asks the delegate at most once per physical function; make a fresh one per scan, since
     * answers may change between scans. A delegate that throws or answers null yields
     * {@link VgpuTypeNames#failed(String)} instead. Safe for concurrent use.
     */
    static VgpuTypeResolver memoizing(VgpuTypeResolver delegate) {
        Map<PciAddress, VgpuTypeNames> answers = new ConcurrentHashMap<>();
        return pf -> answers.computeIfAbsent(pf, key -> {
            try {
                VgpuTypeNames names = delegate.supportedTypes(key);
                return names != null ? names : VgpuTypeNames.failed("vGPU type resolver gave no answer");
            } catch (RuntimeException e) {
                // the contract says "never throws"; a broken resolver still must not abort a scan
                return VgpuTypeNames.failed("vGPU type resolver failed: " + e);
            }
        });
    }
}
