package dev.vgpu.kubelet.testsupport;

import dev.vgpu.kubelet.api.v1beta1.AllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.AllocateResponse;
import dev.vgpu.kubelet.api.v1beta1.ContainerAllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Asynchronous Allocate calls of one request and their outcomes by status code ({@code OK} for an answer), for the
 * tests that flood a server (the transport's, a plugin's, the packaged daemon's). Shared through vgpu-kubelet's test
 * jar. No generated type is in its signatures: the API package is exported only to the adapter modules, which a
 * test-jar class on the class path is not. Threads: calls are sent from the test's thread; outcomes are counted on
 * the client's call threads and read from any thread.
 */
public final class AllocateFlood {

    private final AllocateRequest request;
    private final Map<Status.Code, AtomicInteger> byCode = new ConcurrentHashMap<>();
    private final AtomicInteger answered = new AtomicInteger();

    private AllocateFlood(AllocateRequest request) {
        this.request = request;
    }

    /** Calls that send an empty request. */
    public static AllocateFlood ofEmptyRequests() {
        return new AllocateFlood(AllocateRequest.getDefaultInstance());
    }

    /** Calls that ask for {@code ids} for one container. */
    public static AllocateFlood forDevices(String... ids) {
        return new AllocateFlood(AllocateRequest.newBuilder().addContainerRequests(
                ContainerAllocateRequest.newBuilder().addAllDevicesIds(List.of(ids))).build());
    }

    /** Sends one call on {@code channel}; returns at once. */
    public void send(ManagedChannel channel) {
        DevicePluginGrpc.newStub(channel).allocate(request, new StreamObserver<>() {
            @Override
            public void onNext(AllocateResponse value) {
            }

            @Override
            public void onError(Throwable t) {
                count(Status.fromThrowable(t).getCode());
            }

            @Override
            public void onCompleted() {
                count(Status.Code.OK);
            }
        });
    }

    /** Sends {@code calls} calls, one channel after the other in turn; returns at once. */
    public void send(List<ManagedChannel> channels, int calls) {
        for (int i = 0; i < calls; i++) {
            send(channels.get(i % channels.size()));
        }
    }

    /** Calls answered so far, whatever the answer. */
    public int answered() {
        return answered.get();
    }

    /** Calls answered with {@code code} so far. */
    public int of(Status.Code code) {
        AtomicInteger n = byCode.get(code);
        return n == null ? 0 : n.get();
    }

    /** The codes answered so far. */
    public Set<Status.Code> codes() {
        return Set.copyOf(byCode.keySet());
    }

    /** The counts by code, e.g. {@code {OK=212, RESOURCE_EXHAUSTED=3788}}. */
    @Override
    public String toString() {
        Map<Status.Code, Integer> counts = new TreeMap<>();
        byCode.forEach((code, n) -> counts.put(code, n.get()));
        return counts.toString();
    }

    private void count(Status.Code code) {
        byCode.computeIfAbsent(code, c -> new AtomicInteger()).incrementAndGet();
        answered.incrementAndGet();
    }
}
