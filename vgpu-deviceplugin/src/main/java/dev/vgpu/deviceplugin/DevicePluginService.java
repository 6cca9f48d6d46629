package dev.vgpu.deviceplugin;

import dev.vgpu.core.Device;
import dev.vgpu.core.Resource;
import dev.vgpu.core.Snapshot;
import dev.vgpu.kubelet.api.v1beta1.AllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.AllocateResponse;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginGrpc;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginOptions;
import dev.vgpu.kubelet.api.v1beta1.Empty;
import dev.vgpu.kubelet.api.v1beta1.ListAndWatchResponse;
import dev.vgpu.kubelet.api.v1beta1.PreStartContainerRequest;
import dev.vgpu.kubelet.api.v1beta1.PreStartContainerResponse;
import dev.vgpu.kubelet.api.v1beta1.PreferredAllocationRequest;
import dev.vgpu.kubelet.api.v1beta1.PreferredAllocationResponse;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code v1beta1.DevicePlugin} service of one plugin. Calls run on the transport's gRPC executor threads; every
 * call reads only what the manager's context published (the snapshot current at that moment), never waits for the
 * context, and a new ListAndWatch stream is posted to it. Domain errors cross the wire as {@link Status} codes with
 * a description.
 */
final class DevicePluginService extends DevicePluginGrpc.DevicePluginImplBase {

    private static final Logger LOG = LoggerFactory.getLogger(DevicePluginService.class);

    private final ResourcePlugin plugin;
    private final PluginEnvironment env;
    private final AllocateResponses allocations;

    DevicePluginService(ResourcePlugin plugin, PluginEnvironment env) {
        this.plugin = plugin;
        this.env = env;
        this.allocations = new AllocateResponses(env.handovers());
    }

    @Override
    public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> response) {
        response.onNext(ResourcePlugin.options());
        response.onCompleted();
    }

    @Override
    public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> response) {
        LOG.debug("ListAndWatch stream opened for {}", plugin.name());
        plugin.openStream((ServerCallStreamObserver<ListAndWatchResponse>) response);
    }

    @Override
    public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> response) {
        Instant started = env.clock().instant();
        String code = "OK";
        try {
            AllocateResponse answer = allocations.allocate(plugin.name(), env.snapshots().get(), request);
            LOG.info("Allocated {} of {}", RequestLimits.describe(request), plugin.name());
            response.onNext(answer);
            response.onCompleted();
        } catch (StatusException e) {
            code = e.getStatus().getCode().name();
            LOG.warn("Refused allocation for {}: {}", plugin.name(), e.getStatus().getDescription());
            response.onError(e);
        } catch (RuntimeException e) {
            code = Status.Code.INTERNAL.name();
            LOG.error("Allocation for {} failed: {}", plugin.name(), e.toString(), e);
            response.onError(Status.INTERNAL.withDescription("allocation failed: " + e).asException());
        } finally {
            env.observer().allocated(plugin.name(), code, Duration.between(started, env.clock().instant()));
        }
    }

    @Override
    public void getPreferredAllocation(PreferredAllocationRequest request,
                                       StreamObserver<PreferredAllocationResponse> response) {
        Instant started = env.clock().instant();
        Snapshot snapshot = env.snapshots().get();
        Map<String, Device> devices = snapshot.resource(plugin.name()).map(Resource::devices)
                .map(list -> list.stream().collect(Collectors.toMap(Device::id, Function.identity())))
                .orElse(Map.of());
        PreferredAllocationResponse answer;
        try {
            answer = PreferredAllocation.respond(request, devices);
        } catch (StatusException e) {
            LOG.warn("Refused preferred allocation for {}: {}", plugin.name(), e.getStatus().getDescription());
            response.onError(e);
            env.observer().preferredAllocation(plugin.name(), e.getStatus().getCode().name(),
                    Duration.between(started, env.clock().instant()));
            return;
        }
        response.onNext(answer);
        response.onCompleted();
        env.observer().preferredAllocation(plugin.name(), "OK", Duration.between(started, env.clock().instant()));
    }

    @Override
    public void preStartContainer(PreStartContainerRequest request,
                                  StreamObserver<PreStartContainerResponse> response) {
        response.onNext(PreStartContainerResponse.getDefaultInstance());
        response.onCompleted();
    }
}
