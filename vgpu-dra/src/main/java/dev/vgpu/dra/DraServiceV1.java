package dev.vgpu.dra;

import dev.vgpu.dra.grpc.v1.Claim;
import dev.vgpu.dra.grpc.v1.DRAPluginGrpc;
import dev.vgpu.dra.grpc.v1.Device;
import dev.vgpu.dra.grpc.v1.NodePrepareResourceResponse;
import dev.vgpu.dra.grpc.v1.NodePrepareResourcesRequest;
import dev.vgpu.dra.grpc.v1.NodePrepareResourcesResponse;
import dev.vgpu.dra.grpc.v1.NodeUnprepareResourceResponse;
import dev.vgpu.dra.grpc.v1.NodeUnprepareResourcesRequest;
import dev.vgpu.dra.grpc.v1.NodeUnprepareResourcesResponse;
import io.grpc.stub.StreamObserver;
import java.util.List;

/** {@code k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin}: translates messages for {@link ClaimCalls}. */
final class DraServiceV1 extends DRAPluginGrpc.DRAPluginImplBase {

    private final ClaimCalls calls;

    DraServiceV1(ClaimCalls calls) {
        this.calls = calls;
    }

    @Override
    public void nodePrepareResources(NodePrepareResourcesRequest request,
                                     StreamObserver<NodePrepareResourcesResponse> observer) {
        calls.prepare(refs(request.getClaimsList()), DraServiceV1::prepared, observer);
    }

    @Override
    public void nodeUnprepareResources(NodeUnprepareResourcesRequest request,
                                       StreamObserver<NodeUnprepareResourcesResponse> observer) {
        calls.unprepare(refs(request.getClaimsList()), DraServiceV1::unprepared, observer);
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
