package dev.vgpu.kubelet.standin;

import dev.vgpu.kubelet.api.v1beta1.RegisterRequest;

/**
 * One {@code Register} call the stand-in kubelet received, as sent.
 *
 * @param version                      API version, {@code v1beta1} expected
 * @param endpoint                     the plugin socket's file name in the device-plugin directory
 * @param resourceName                 the extended resource, e.g. {@code nvidia.com/GRID_T4-1Q}
 * @param preStartRequired             the options' {@code pre_start_required}
 * @param preferredAllocationAvailable the options' {@code get_preferred_allocation_available}
 */
public record Registration(String version, String endpoint, String resourceName, boolean preStartRequired,
                           boolean preferredAllocationAvailable) {

    static Registration of(RegisterRequest request) {
        return new Registration(request.getVersion(), request.getEndpoint(), request.getResourceName(),
                request.getOptions().getPreStartRequired(), request.getOptions().getGetPreferredAllocationAvailable());
    }
}
