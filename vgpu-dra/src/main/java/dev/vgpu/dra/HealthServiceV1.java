package dev.vgpu.dra;

import dev.vgpu.dra.grpc.health.v1.DRAResourceHealthGrpc;
import dev.vgpu.dra.grpc.health.v1.DeviceHealth;
import dev.vgpu.dra.grpc.health.v1.DeviceIdentifier;
import dev.vgpu.dra.grpc.health.v1.HealthStatus;
import dev.vgpu.dra.grpc.health.v1.NodeWatchResourcesRequest;
import dev.vgpu.dra.grpc.health.v1.NodeWatchResourcesResponse;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.List;

/**
 * {@code v1.DRAResourceHealth} (newer kubelets): hands each stream to {@link HealthStreams} and turns its reports into
 * this version's messages. The handler runs on a gRPC call thread and returns at once; the stream's messages are sent
 * from the plugin's serial context.
 */
final class HealthServiceV1 extends DRAResourceHealthGrpc.DRAResourceHealthImplBase {

    private final HealthStreams streams;

    HealthServiceV1(HealthStreams streams) {
        this.streams = streams;
    }

    @Override
    public void nodeWatchResources(NodeWatchResourcesRequest request,
                                   StreamObserver<NodeWatchResourcesResponse> observer) {
        ServerCallStreamObserver<NodeWatchResourcesResponse> call =
                (ServerCallStreamObserver<NodeWatchResourcesResponse>) observer;
        HealthStreams.Sink sink = new HealthStreams.Sink() {
            @Override
            public boolean ready() {
                return call.isReady() && !call.isCancelled();
            }

            @Override
            public void send(List<HealthReport> devices) {
                NodeWatchResourcesResponse.Builder message = NodeWatchResourcesResponse.newBuilder();
                devices.forEach(d -> message.addDevices(DeviceHealth.newBuilder()
                        .setDevice(DeviceIdentifier.newBuilder().setPoolName(d.pool()).setDeviceName(d.device()))
                        .setHealth(status(d.status()))
                        .setLastUpdatedTime(d.updatedSeconds()).setMessage(d.message())));
                call.onNext(message.build());
            }

            @Override
            public void complete() {
                call.onCompleted();
            }

            @Override
            public void fail(Status status) {
                call.onError(status.asRuntimeException());
            }

            @Override
            public String describe() {
                return "v1";
            }
        };
        call.setOnCancelHandler(() -> streams.closed(sink));
        call.setOnReadyHandler(() -> streams.ready(sink));
        streams.open(sink, UnixDomainTransport.connection());
    }

    private static HealthStatus status(HealthReport.Status status) {
        return switch (status) {
            case UNKNOWN -> HealthStatus.UNKNOWN;
            case HEALTHY -> HealthStatus.HEALTHY;
            case UNHEALTHY -> HealthStatus.UNHEALTHY;
        };
    }
}
