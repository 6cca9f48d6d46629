package dev.vgpu.dra;

import dev.vgpu.dra.grpc.v1beta1.Claim;
import dev.vgpu.dra.grpc.v1beta1.DRAPluginGrpc;
import dev.vgpu.dra.grpc.v1beta1.Device;
import dev.vgpu.dra.grpc.v1beta1.NodePrepareResourceResponse;
import dev.vgpu.dra.grpc.v1beta1.NodePrepareResourcesRequest;
import dev.vgpu.dra.grpc.v1beta1.NodePrepareResourcesResponse;
import dev.vgpu.dra.grpc.v1beta1.NodeUnprepareResourceResponse;
import dev.vgpu.dra.grpc.v1beta1.NodeUnprepareResourcesRequest;
import dev.vgpu.dra.grpc.v1beta1.NodeUnprepareResourcesResponse;
import io.grpc.stub.StreamObserver;
import java.util.List;

/**
 * {@code k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin}, for kubelets that speak v1beta1: the same translation as
 * {@link DraServiceV1} (the messages differ only in v1's {@code share_id}, which this driver never sets).
 */
final class DraServiceV1beta1 extends DRAPluginGrpc.DRAPluginImplBase {

    private final ClaimCalls calls;

    DraServiceV1beta1(ClaimCalls calls) {
        this.calls = calls;
    }

    @Override
    public void nodePrepareResources(NodePrepareResourcesRequest request,
                                     StreamObserver<NodePrepareResourcesResponse> observer) {
        calls.prepare(refs(request.getClaimsList()), DraServiceV1beta1::prepared, observer);
    }

    @Override
    public void nodeUnprepareResources(NodeUnprepareResourcesRequest request,
                                       StreamObserver<NodeUnprepareResourcesResponse> observer) {
        calls.unprepare(refs(request.getClaimsList()), DraServiceV1beta1::unprepared, observer);
    }

    private static List<ClaimRef> refs(List<Claim> claims) {
        return claims.stream().map(c -> new ClaimRef(c.getNamespace(), c.getName(), c.getUid())).toList();
    }

    private static NodePrepareResourcesResponse prepared(ClaimPreparer.Result result) {
        NodePrepareResourcesResponse.Builder out = NodePrepareResourcesResponse.newBuilder();
        result.outcomes().forEach((uid, error) -> {
            NodePrepareResourceResponse.Builder claim = NodePrepareResourceResponse.newBuilder();
            if (error.isPresent()) {
                claim.setError(error.get());
            } else {
                result.devices().getOrDefault(uid, List.of()).forEach(d -> claim.addDevices(Device.newBuilder()
                        .addAllRequestNames(d.requestNames()).setPoolName(d.pool()).setDeviceName(d.device())
                        .addAllCdiDeviceIds(d.cdiIds())));
            }
            out.putClaims(uid, claim.build());
        });
        return out.build();
    }

    private static NodeUnprepareResourcesResponse unprepared(ClaimPreparer.Result result) {
        NodeUnprepareResourcesResponse.Builder out = NodeUnprepareResourcesResponse.newBuilder();
        result.outcomes().forEach((uid, error) -> out.putClaims(uid, NodeUnprepareResourceResponse.newBuilder()
                .setError(error.orElse("")).build()));
        return out.build();
    }
}
