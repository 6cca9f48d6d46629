package dev.vgpu.dra;

import dev.vgpu.dra.grpc.registration.InfoRequest;
import dev.vgpu.dra.grpc.registration.PluginInfo;
import dev.vgpu.dra.grpc.registration.RegistrationGrpc;
import dev.vgpu.dra.grpc.registration.RegistrationStatus;
import dev.vgpu.dra.grpc.v1.Claim;
import dev.vgpu.dra.grpc.v1.DRAPluginGrpc;
import dev.vgpu.dra.grpc.v1.NodePrepareResourcesRequest;
import dev.vgpu.dra.grpc.v1.NodePrepareResourcesResponse;
import dev.vgpu.dra.grpc.v1.NodeUnprepareResourcesRequest;
import dev.vgpu.dra.grpc.v1.NodeUnprepareResourcesResponse;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The kubelet's side of a DRA plugin over real unix sockets, with grpc-java's own unix channel (not the plugin's
 * transport): the plugin watcher's GetInfo and NotifyRegistrationStatus, then Prepare and Unprepare on the endpoint
 * GetInfo names, with the kubelet's 45 s call deadline. Blocking; one test thread.
 *
 * <p>Public, in vgpu-dra's test jar, for the daemon's end-to-end test ({@code DraEndToEndIT}).
 */
// Its methods speak the generated kubelet API, which the module does not export; the daemon's test reads them on the
// class path.
@SuppressWarnings("exports")
public final class TestKubelet implements AutoCloseable {

    private final List<ManagedChannel> channels = new ArrayList<>();

    /** The plugin watcher's first question. */
    public PluginInfo getInfo(Path registrationSocket) {
        return registration(registrationSocket).getInfo(InfoRequest.getDefaultInstance());
    }

    /** The plugin watcher's verdict. */
    public void notify(Path registrationSocket, boolean registered, String error) {
        registration(registrationSocket).notifyRegistrationStatus(RegistrationStatus.newBuilder()
                .setPluginRegistered(registered).setError(error).build());
    }

    /** NodePrepareResources on v1. */
    public NodePrepareResourcesResponse prepare(Path endpoint, Claim... claims) {
        return v1(endpoint).nodePrepareResources(NodePrepareResourcesRequest.newBuilder()
                .addAllClaims(List.of(claims)).build());
    }

    /** NodeUnprepareResources on v1. */
    public NodeUnprepareResourcesResponse unprepare(Path endpoint, Claim... claims) {
        return v1(endpoint).nodeUnprepareResources(NodeUnprepareResourcesRequest.newBuilder()
                .addAllClaims(List.of(claims)).build());
    }

    /** NodePrepareResources on v1beta1. */
    dev.vgpu.dra.grpc.v1beta1.NodePrepareResourcesResponse prepareV1beta1(Path endpoint,
                                                                          dev.vgpu.dra.grpc.v1beta1.Claim... claims) {
        return dev.vgpu.dra.grpc.v1beta1.DRAPluginGrpc.newBlockingStub(dial(endpoint))
                .withDeadlineAfter(45, TimeUnit.SECONDS)
                .nodePrepareResources(dev.vgpu.dra.grpc.v1beta1.NodePrepareResourcesRequest.newBuilder()
                        .addAllClaims(List.of(claims)).build());
    }

    /** NodeUnprepareResources on v1beta1. */
    dev.vgpu.dra.grpc.v1beta1.NodeUnprepareResourcesResponse unprepareV1beta1(
            Path endpoint, dev.vgpu.dra.grpc.v1beta1.Claim... claims) {
        return dev.vgpu.dra.grpc.v1beta1.DRAPluginGrpc.newBlockingStub(dial(endpoint))
                .withDeadlineAfter(45, TimeUnit.SECONDS)
                .nodeUnprepareResources(dev.vgpu.dra.grpc.v1beta1.NodeUnprepareResourcesRequest.newBuilder()
                        .addAllClaims(List.of(claims)).build());
    }

    /** Opens the kubelet's v1 {@code DRAResourceHealth} stream on the plugin's endpoint. */
    public HealthWatch<dev.vgpu.dra.grpc.health.v1.NodeWatchResourcesResponse> watchHealth(Path endpoint) {
        HealthWatch<dev.vgpu.dra.grpc.health.v1.NodeWatchResourcesResponse> watch = new HealthWatch<>();
        dev.vgpu.dra.grpc.health.v1.DRAResourceHealthGrpc.newStub(dial(endpoint)).nodeWatchResources(
                dev.vgpu.dra.grpc.health.v1.NodeWatchResourcesRequest.getDefaultInstance(), watch);
        return watch;
    }

    /** Opens the kubelet's v1alpha1 {@code DRAResourceHealth} stream on the plugin's endpoint. */
    HealthWatch<dev.vgpu.dra.grpc.health.v1alpha1.NodeWatchResourcesResponse> watchHealthV1alpha1(Path endpoint) {
        HealthWatch<dev.vgpu.dra.grpc.health.v1alpha1.NodeWatchResourcesResponse> watch = new HealthWatch<>();
        dev.vgpu.dra.grpc.health.v1alpha1.DRAResourceHealthGrpc.newStub(dial(endpoint)).nodeWatchResources(
                dev.vgpu.dra.grpc.health.v1alpha1.NodeWatchResourcesRequest.getDefaultInstance(), watch);
        return watch;
    }

    /**
     * One health stream as the kubelet holds it: messages queue up as gRPC's threads receive them and the test
     * thread takes them in order; {@link #cancel()} ends it from the kubelet's side.
     */
    public static final class HealthWatch<T> implements ClientResponseObserver<Object, T> {
        private final BlockingQueue<T> messages = new LinkedBlockingQueue<>();
        private final CountDownLatch ended = new CountDownLatch(1);
        private volatile ClientCallStreamObserver<Object> call;
        private volatile Throwable error;

        @Override
        public void beforeStart(ClientCallStreamObserver<Object> requestStream) {
            call = requestStream;
        }

        @Override
        public void onNext(T message) {
            messages.add(message);
        }

        @Override
        public void onError(Throwable t) {
            error = t;
            ended.countDown();
        }

        @Override
        public void onCompleted() {
            ended.countDown();
        }

        /** The next message; fails when none comes within the kubelet's call deadline (45 s). */
        public T next() throws InterruptedException {
            T message = messages.poll(45, TimeUnit.SECONDS);
            if (message == null) {
                throw new AssertionError("no health message within 45 s" + (error == null ? "" : ": " + error));
            }
            return message;
        }

        /** Whether the plugin ended the stream normally (waits up to 45 s). */
        boolean completed() throws InterruptedException {
            return ended.await(45, TimeUnit.SECONDS) && error == null;
        }

        void cancel() {
            call.cancel("the kubelet stops watching", null);
        }
    }

    /** A claim reference as the kubelet sends it. */
    public static Claim claim(String namespace, String name, String uid) {
        return Claim.newBuilder().setNamespace(namespace).setName(name).setUid(uid).build();
    }

    private RegistrationGrpc.RegistrationBlockingStub registration(Path socket) {
        return RegistrationGrpc.newBlockingStub(dial(socket)).withDeadlineAfter(45, TimeUnit.SECONDS);
    }

    private DRAPluginGrpc.DRAPluginBlockingStub v1(Path endpoint) {
        return DRAPluginGrpc.newBlockingStub(dial(endpoint)).withDeadlineAfter(45, TimeUnit.SECONDS);
    }

    private ManagedChannel dial(Path socket) {
        ManagedChannel channel = Grpc.newChannelBuilder("unix://" + socket, InsecureChannelCredentials.create())
                .build();
        channels.add(channel);
        return channel;
    }

    @Override
    public void close() {
        for (ManagedChannel channel : channels) {
            try {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
