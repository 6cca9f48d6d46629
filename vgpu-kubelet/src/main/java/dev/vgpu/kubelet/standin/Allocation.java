package dev.vgpu.kubelet.standin;

import java.util.List;
import java.util.Map;

/**
 * What a plugin answered to Allocate for one container, in plain Java types.
 *
 * @param envs      the environment variables, e.g. {@code PCI_RESOURCE_NVIDIA_COM_...} = the BDFs
 * @param hostPaths the host paths of the device nodes, in the plugin's order
 */
public record Allocation(Map<String, String> envs, List<String> hostPaths) {
    /** Copies both. */
    public Allocation {
        envs = Map.copyOf(envs);
        hostPaths = List.copyOf(hostPaths);
    }
}
