package dev.vgpu.deviceplugin;

import dev.vgpu.attach.DeviceNode;
import dev.vgpu.attach.Handover;
import dev.vgpu.attach.Handovers;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.kubelet.api.v1beta1.AllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.AllocateResponse;
import dev.vgpu.kubelet.api.v1beta1.ContainerAllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.ContainerAllocateResponse;
import dev.vgpu.kubelet.api.v1beta1.DeviceSpec;
import io.grpc.Status;
import io.grpc.StatusException;

/**
 * Allocate answers as KubeVirt reads them (docs/HOST-FACTS.md §3): the request limits, then per container request
 * the {@link Handover} that {@link Handovers} answers (checks, device nodes, env; docs/ARCHITECTURE.md, "Attachment
 * knowledge"), translated to protobuf. A refusal is {@code INVALID_ARGUMENT} with its reason. Each node is a
 * DeviceSpec with host path = container path and {@link DeviceNode#PERMISSIONS}. Stateless.
 */
final class AllocateResponses {

    private final Handovers handovers;

    AllocateResponses(Handovers handovers) {
        this.handovers = handovers;
    }

    /**
     * One response per container request, in order.
     *
     * @param name     the plugin's resource
     * @param snapshot the snapshot current at the call
     * @throws StatusException {@code INVALID_ARGUMENT} naming the limit a request is over ({@link RequestLimits},
     *                         checked before anything else), or the device that is unknown, not advertised by
     *                         {@code name}, moved to another IOMMU group, or no longer what was advertised
     */
    AllocateResponse allocate(ResourceName name, Snapshot snapshot, AllocateRequest request) throws StatusException {
        RequestLimits.check(request);
        AllocateResponse.Builder out = AllocateResponse.newBuilder();
        for (ContainerAllocateRequest container : request.getContainerRequestsList()) {
            Handover answer = handovers.check(snapshot, name, container.getDevicesIdsList());
            if (answer instanceof Handover.Refused refused) {
                throw Status.INVALID_ARGUMENT.withDescription(refused.reason()).asException();
            }
            out.addContainerResponses(response((Handover.Granted) answer));
        }
        return out.build();
    }

    private static ContainerAllocateResponse response(Handover.Granted granted) {
        ContainerAllocateResponse.Builder out = ContainerAllocateResponse.newBuilder().putAllEnvs(granted.env());
        for (DeviceNode node : granted.nodes()) {
            out.addDevices(DeviceSpec.newBuilder().setHostPath(node.path()).setContainerPath(node.path())
                    .setPermissions(DeviceNode.PERMISSIONS));
        }
        return out.build();
    }
}
