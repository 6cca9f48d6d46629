package dev.vgpu.kubelet.standin;

import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import dev.vgpu.kubelet.api.v1beta1.AllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.AllocateResponse;
import dev.vgpu.kubelet.api.v1beta1.ContainerAllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.ContainerPreferredAllocationRequest;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginConstants;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginGrpc;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginOptions;
import dev.vgpu.kubelet.api.v1beta1.Empty;
import dev.vgpu.kubelet.api.v1beta1.ListAndWatchResponse;
import dev.vgpu.kubelet.api.v1beta1.PreferredAllocationRequest;
import dev.vgpu.kubelet.api.v1beta1.RegisterRequest;
import dev.vgpu.kubelet.api.v1beta1.RegistrationGrpc;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A kubelet stand-in for tests and demos: it serves {@code v1beta1.Registration} on
 * {@code <dir>/kubelet.sock} and acts as the client of every plugin that registers, as the kubelet's device
 * manager does.
 *
 * <p>On each {@code Register} it records the request, dials {@code <dir>/<endpoint>}, calls
 * {@code GetDevicePluginOptions} (failing the registration when the plugin cannot be reached, as the kubelet
 * does), then opens {@code ListAndWatch} and keeps the latest device list of each resource. A new registration of
 * a resource replaces its previous connection. Every method is thread-safe; {@link #await} waits without polling
 * until a condition over this object holds.
 * <pre>{@code
 * try (StandInKubelet kubelet = StandInKubelet.start(dir)) {
 *     ... start the plugins with device-plugin dir = dir ...
 *     kubelet.await(Duration.ofSeconds(10), k -> k.streaming("nvidia.com/GRID_T4-1Q"));
 *     AllocateResponse r = kubelet.allocate("nvidia.com/GRID_T4-1Q", List.of(uuid));
 * }
 * }</pre>
 * Threads: one event-loop thread and four call threads named {@code stand-in-kubelet-…}, all ended by
 * {@link #close()}. State lives in a {@link KubeletState}; the server reference is the only other mutable field.
 */
public final class StandInKubelet implements AutoCloseable {

    /** The registration socket's file name. */
    public static final String SOCKET = DevicePluginConstants.KUBELET_SOCKET;

    private static final Logger LOG = LoggerFactory.getLogger(StandInKubelet.class);
    private static final String CHECKPOINT = "kubelet_internal_checkpoint";

    private final Path dir;
    private final UnixDomainTransport transport;
    private final KubeletState state = new KubeletState();
    private final AtomicReference<Server> server = new AtomicReference<>();

    private StandInKubelet(Path dir) {
        this.dir = dir;
        this.transport = UnixDomainTransport.create("stand-in-kubelet", 1, 4);
    }

    /**
     * Creates the directory if needed and serves {@code kubelet.sock} there (replacing a stale one).
     *
     * @throws UncheckedIOException when the socket cannot be served
     */
    public static StandInKubelet start(Path devicePluginDir) {
        StandInKubelet kubelet = new StandInKubelet(devicePluginDir);
        try {
            Files.createDirectories(devicePluginDir);
            kubelet.serve();
            return kubelet;
        } catch (IOException e) {
            kubelet.close();
            throw new UncheckedIOException("cannot serve " + devicePluginDir.resolve(SOCKET), e);
        }
    }

    /** The registration socket, {@code <dir>/kubelet.sock}. */
    public Path socket() {
        return dir.resolve(SOCKET);
    }

    /** Every Register call received so far, in order, refused ones included. */
    public List<Registration> registrations() {
        return state.registrations();
    }

    /** The latest device list per resource name (e.g. {@code nvidia.com/GRID_T4-1Q}), sorted by name. */
    public Map<String, List<DeviceState>> resources() {
        return state.resources();
    }

    /** How many ListAndWatch messages arrived for a resource, over all its streams, since start. */
    public int listUpdates(String resourceName) {
        return state.listUpdates(resourceName);
    }

    /** Whether the current ListAndWatch stream of a resource delivered a list and is still open. */
    public boolean streaming(String resourceName) {
        return state.connection(resourceName).map(c -> c.streaming).orElse(false);
    }

    /** The options the plugin of a resource answered to GetDevicePluginOptions, while it is connected. */
    public Optional<DevicePluginOptions> options(String resourceName) {
        return state.connection(resourceName).map(c -> c.options);
    }

    /**
     * Waits until {@code condition} holds, re-testing it after every change this kubelet sees.
     *
     * @throws IllegalStateException when it still does not hold after {@code timeout}
     */
    public void await(Duration timeout, Predicate<StandInKubelet> condition) throws InterruptedException {
        if (!state.await(timeout, () -> condition.test(this))) {
            throw new IllegalStateException("condition not met within " + timeout + "; registrations "
                    + registrations().size() + ", resources " + resources());
        }
    }

    /**
     * Calls Allocate on a resource's plugin with one container request, as the kubelet does.
     *
     * @throws StatusRuntimeException with the plugin's status when it refuses, {@code UNAVAILABLE} when the
     *                                resource is not connected
     */
    public AllocateResponse allocate(String resourceName, List<String> deviceIds) {
        return allocate(resourceName, AllocateRequest.newBuilder()
                .addContainerRequests(ContainerAllocateRequest.newBuilder().addAllDevicesIds(deviceIds)).build());
    }

    /**
     * Calls Allocate like {@link #allocate(String, List)} and returns the single container's answer in plain types.
     *
     * @param resourceName the full resource name, {@code nvidia.com/...}
     * @param deviceIds    the devices to allocate
     * @return the environment and the device nodes' host paths
     * @throws StatusRuntimeException with the plugin's status when it refuses
     */
    public Allocation allocation(String resourceName, List<String> deviceIds) {
        var container = allocate(resourceName, deviceIds).getContainerResponses(0);
        return new Allocation(container.getEnvsMap(),
                container.getDevicesList().stream().map(d -> d.getHostPath()).toList());
    }

    /** Calls Allocate with any request, several container requests say. */
    public AllocateResponse allocate(String resourceName, AllocateRequest request) {
        return connection(resourceName).blocking().allocate(request);
    }

    /** Calls GetPreferredAllocation with one container request and returns the preferred ids. */
    public List<String> preferred(String resourceName, List<String> available, List<String> mustInclude, int size) {
        PreferredAllocationRequest request = PreferredAllocationRequest.newBuilder()
                .addContainerRequests(ContainerPreferredAllocationRequest.newBuilder()
                        .addAllAvailableDeviceIDs(available).addAllMustIncludeDeviceIDs(mustInclude)
                        .setAllocationSize(size)).build();
        return connection(resourceName).blocking().getPreferredAllocation(request)
                .getContainerResponses(0).getDeviceIDsList();
    }

    /**
     * Simulates a kubelet restart: drops every plugin connection and device list, deletes every file in the
     * directory but the checkpoint (plugin sockets included), then serves a new {@code kubelet.sock}.
     */
    public void restart() throws IOException {
        detach(false);
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                if (!Files.isDirectory(entry) && !entry.getFileName().toString().equals(CHECKPOINT)) {
                    Files.deleteIfExists(entry);
                }
            }
        }
        if (!state.isClosed()) {
            serve();
        }
    }

    /** Stops serving, closes every plugin connection, deletes {@code kubelet.sock} and ends all threads. */
    @Override
    public void close() {
        if (state.isClosed()) {
            return;
        }
        detach(true);
        transport.close();
        try {
            Files.deleteIfExists(socket());
        } catch (IOException e) {
            LOG.debug("Cannot delete {}: {}", socket(), e.toString());
        }
    }

    private void serve() throws IOException {
        server.set(transport.serve(socket(), List.of(new RegistrationService())));
    }

    /** Drops connections and stops the server, outside any lock (running Register calls need the state's lock). */
    private void detach(boolean forGood) {
        state.detachAll(forGood).forEach(PluginConnection::close);
        Server old = server.getAndSet(null);
        if (old != null) {
            old.shutdownNow();
            try {
                old.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private PluginConnection connection(String resourceName) {
        return state.connection(resourceName).orElseThrow(() ->
                Status.UNAVAILABLE.withDescription(resourceName + " is not connected").asRuntimeException());
    }

    /** Dials the plugin, asks its options and opens its stream, as the kubelet's Register handler does. */
    private void connect(RegisterRequest request, long since) {
        Path endpoint = dir.resolve(request.getEndpoint());
        ManagedChannel channel = transport.dial(endpoint);
        DevicePluginOptions options;
        try {
            options = DevicePluginGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .getDevicePluginOptions(Empty.getDefaultInstance());
        } catch (StatusRuntimeException e) {
            channel.shutdownNow();
            throw Status.UNAVAILABLE.withDescription("cannot dial " + endpoint + ": " + e.getStatus())
                    .asRuntimeException();
        }
        PluginConnection connection = new PluginConnection(request.getResourceName(), channel, options);
        if (!state.attach(connection, since)) {
            connection.close();
            throw Status.UNAVAILABLE.withDescription("kubelet restarted meanwhile").asRuntimeException();
        }
        LOG.debug("Stand-in kubelet connected to {} at {}", request.getResourceName(), endpoint);
        // Forked: the stream must outlive the Register call, whose context is cancelled when it returns.
        Context.current().fork().run(() -> DevicePluginGrpc.newStub(channel)
                .listAndWatch(Empty.getDefaultInstance(), new ListObserver(connection)));
    }

    private static List<DeviceState> devices(ListAndWatchResponse list) {
        List<DeviceState> out = new ArrayList<>();
        for (dev.vgpu.kubelet.api.v1beta1.Device d : list.getDevicesList()) {
            OptionalInt numa = d.hasTopology() && d.getTopology().getNodesCount() > 0
                    ? OptionalInt.of((int) d.getTopology().getNodes(0).getID()) : OptionalInt.empty();
            out.add(new DeviceState(d.getID(), d.getHealth(), numa));
        }
        return out;
    }

    /** Receives one plugin's ListAndWatch stream. */
    private final class ListObserver implements StreamObserver<ListAndWatchResponse> {
        private final PluginConnection connection;

        ListObserver(PluginConnection connection) {
            this.connection = connection;
        }

        @Override
        public void onNext(ListAndWatchResponse value) {
            state.received(connection, devices(value));
        }

        @Override
        public void onError(Throwable t) {
            LOG.debug("Stand-in kubelet: stream of {} failed: {}", connection.resourceName, t.toString());
            state.ended(connection);
        }

        @Override
        public void onCompleted() {
            LOG.debug("Stand-in kubelet: stream of {} completed", connection.resourceName);
            state.ended(connection);
        }
    }

    /** The kubelet's Registration service: validates like the kubelet, then connects back to the plugin. */
    private final class RegistrationService extends RegistrationGrpc.RegistrationImplBase {
        @Override
        public void register(RegisterRequest request, StreamObserver<Empty> response) {
            long since = state.registered(Registration.of(request));
            if (!"v1beta1".equals(request.getVersion())) {
                response.onError(Status.INVALID_ARGUMENT.withDescription("unsupported version "
                        + request.getVersion()).asException());
                return;
            }
            String endpoint = request.getEndpoint();
            if (!request.getResourceName().contains("/") || endpoint.isEmpty() || endpoint.contains("/")) {
                response.onError(Status.INVALID_ARGUMENT.withDescription("invalid resource name or endpoint: "
                        + request.getResourceName() + ", " + endpoint).asException());
                return;
            }
            try {
                connect(request, since);
            } catch (StatusRuntimeException e) {
                response.onError(e);
                return;
            }
            response.onNext(Empty.getDefaultInstance());
            response.onCompleted();
        }
    }
}
