package dev.vgpu.deviceplugin.kubelet;

import dev.vgpu.deviceplugin.transport.UnixDomainTransport;
import dev.vgpu.deviceplugin.v1beta1.AllocateRequest;
import dev.vgpu.deviceplugin.v1beta1.AllocateResponse;
import dev.vgpu.deviceplugin.v1beta1.ContainerAllocateRequest;
import dev.vgpu.deviceplugin.v1beta1.ContainerPreferredAllocationRequest;
import dev.vgpu.deviceplugin.v1beta1.DevicePluginGrpc;
import dev.vgpu.deviceplugin.v1beta1.DevicePluginOptions;
import dev.vgpu.deviceplugin.v1beta1.Empty;
import dev.vgpu.deviceplugin.v1beta1.ListAndWatchResponse;
import dev.vgpu.deviceplugin.v1beta1.PreferredAllocationRequest;
import dev.vgpu.deviceplugin.v1beta1.RegisterRequest;
import dev.vgpu.deviceplugin.v1beta1.RegistrationGrpc;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A kubelet stand-in for tests and demos: it serves {@code v1beta1.Registration} on
 * {@code <dir>/kubelet.sock} and acts as the client of every plugin that registers, like the real kubelet's
 * device manager does.
 *
 * <p>On each {@code Register} it records the request, dials {@code <dir>/<endpoint>}, calls
 * {@code GetDevicePluginOptions} (failing the registration when the plugin cannot be reached, as the kubelet
 * does), then opens {@code ListAndWatch} and keeps the latest device list of each resource. A new registration of
 * a resource replaces its previous connection. Everything is thread-safe; {@link #await} waits (without
 * polling) until a condition over this object holds.
 * <pre>{@code
 * try (StandInKubelet kubelet = StandInKubelet.start(dir)) {
 *     ... start the plugins with device-plugin dir = dir ...
 *     kubelet.await(Duration.ofSeconds(10), k -> k.resources().containsKey("nvidia.com/GRID_T4-1Q"));
 *     AllocateResponse r = kubelet.allocate("nvidia.com/GRID_T4-1Q", List.of(uuid));
 * }
 * }</pre>
 * Threads: one event-loop thread and four call threads, named {@code stand-in-kubelet-…}; all end in
 * {@link #close()}. All mutable state below is guarded by {@code lock}.
 */
public final class StandInKubelet implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(StandInKubelet.class);

    /** The registration socket's file name. */
    public static final String SOCKET = "kubelet.sock";

    private final Path dir;
    private final UnixDomainTransport transport;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final List<Registration> registrations = new ArrayList<>();
    private final Map<String, PluginConnection> connections = new HashMap<>();
    private final Map<String, List<DeviceState>> resources = new TreeMap<>();
    private final Map<String, Integer> updates = new HashMap<>();
    private Server server;
    private boolean closed;
    private long generation;

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

    /** Every Register call received so far, in order (including refused ones). */
    public List<Registration> registrations() {
        return locked(() -> List.copyOf(registrations));
    }

    /** The latest device list per resource name (e.g. {@code nvidia.com/GRID_T4-1Q}), sorted by name. */
    public Map<String, List<DeviceState>> resources() {
        return locked(() -> Map.copyOf(resources));
    }

    /** How many ListAndWatch messages arrived for a resource, over all its streams, since start. */
    public int listUpdates(String resourceName) {
        return locked(() -> updates.getOrDefault(resourceName, 0));
    }

    /** Whether the current ListAndWatch stream of a resource delivered a list and is still open. */
    public boolean streaming(String resourceName) {
        return locked(() -> connections.containsKey(resourceName) && connections.get(resourceName).streaming);
    }

    /** The options the plugin of a resource answered to GetDevicePluginOptions, when it is connected. */
    public Optional<DevicePluginOptions> options(String resourceName) {
        return locked(() -> Optional.ofNullable(connections.get(resourceName)).map(c -> c.options));
    }

    /**
     * Waits until {@code condition} holds, re-testing it after every change this kubelet sees.
     *
     * @throws IllegalStateException when it still does not hold after {@code timeout}
     */
    public void await(Duration timeout, Predicate<StandInKubelet> condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            while (!condition.test(this)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("condition not met within " + timeout + "; registrations "
                            + registrations.size() + ", resources " + resources);
                }
                changed.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Calls Allocate on a resource's plugin with one container request, as the kubelet does.
     *
     * @throws StatusRuntimeException with the plugin's status when it refuses, {@code UNAVAILABLE} when the
     *                                resource is not registered
     */
    public AllocateResponse allocate(String resourceName, List<String> deviceIds) {
        return allocate(resourceName, AllocateRequest.newBuilder()
                .addContainerRequests(ContainerAllocateRequest.newBuilder().addAllDevicesIds(deviceIds)).build());
    }

    /** Calls Allocate with any request (several container requests, say). */
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
        detach();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                if (!Files.isDirectory(entry) && !entry.getFileName().toString().equals("kubelet_internal_checkpoint")) {
                    Files.deleteIfExists(entry);
                }
            }
        }
        lock.lock();
        try {
            if (!closed) {
                serve();
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Stops serving, closes every plugin connection, deletes {@code kubelet.sock} and ends all threads. */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
        } finally {
            lock.unlock();
        }
        detach();
        transport.close();
        try {
            Files.deleteIfExists(socket());
        } catch (IOException e) {
            // Nothing else to do: the directory may be gone already.
        }
    }

    private void serve() throws IOException {
        server = transport.serve(socket(), List.of(new RegistrationService()));
    }

    /**
     * Forgets every connection and device list and stops the server. The waiting happens outside the lock, since
     * Register calls still running need the lock to finish; {@code generation} makes their late results void.
     */
    private void detach() {
        Server old;
        List<PluginConnection> dropped;
        lock.lock();
        try {
            generation++;
            old = server;
            server = null;
            dropped = List.copyOf(connections.values());
            connections.clear();
            resources.clear();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        dropped.forEach(PluginConnection::close);
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
        return locked(() -> Optional.ofNullable(connections.get(resourceName))).orElseThrow(() ->
                Status.UNAVAILABLE.withDescription(resourceName + " is not registered").asRuntimeException());
    }

    private <T> T locked(java.util.function.Supplier<T> read) {
        lock.lock();
        try {
            return read.get();
        } finally {
            lock.unlock();
        }
    }

    private void connect(RegisterRequest request, long since) {
        String name = request.getResourceName();
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
        PluginConnection connection = new PluginConnection(name, channel, options);
        lock.lock();
        try {
            if (closed || generation != since) {
                connection.close();
                throw Status.UNAVAILABLE.withDescription("kubelet restarted meanwhile").asRuntimeException();
            }
            PluginConnection previous = connections.put(name, connection);
            if (previous != null) {
                previous.close();
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        LOG.debug("Stand-in kubelet connected to {} at {}", name, endpoint);
        // Forked: the stream must outlive the Register call whose context would cancel it on return.
        Context.current().fork().run(() -> DevicePluginGrpc.newStub(channel)
                .listAndWatch(Empty.getDefaultInstance(), new ListObserver(connection)));
    }

    private void received(PluginConnection connection, ListAndWatchResponse list) {
        LOG.debug("Stand-in kubelet received {} devices of {}", list.getDevicesCount(), connection.resourceName);
        List<DeviceState> devices = new ArrayList<>();
        for (dev.vgpu.deviceplugin.v1beta1.Device d : list.getDevicesList()) {
            OptionalInt numa = d.hasTopology() && d.getTopology().getNodesCount() > 0
                    ? OptionalInt.of((int) d.getTopology().getNodes(0).getID()) : OptionalInt.empty();
            devices.add(new DeviceState(d.getID(), d.getHealth(), numa));
        }
        lock.lock();
        try {
            if (connections.get(connection.resourceName) == connection) {
                resources.put(connection.resourceName, List.copyOf(devices));
                connection.streaming = true;
            }
            updates.merge(connection.resourceName, 1, Integer::sum);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void ended(PluginConnection connection, Throwable error) {
        LOG.debug("Stand-in kubelet: ListAndWatch of {} ended: {}", connection.resourceName,
                error == null ? "completed" : error.toString());
        lock.lock();
        try {
            connection.streaming = false;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Receives one plugin's ListAndWatch stream. */
    private final class ListObserver implements StreamObserver<ListAndWatchResponse> {
        private final PluginConnection connection;

        ListObserver(PluginConnection connection) {
            this.connection = connection;
        }

        @Override
        public void onNext(ListAndWatchResponse value) {
            received(connection, value);
        }

        @Override
        public void onError(Throwable t) {
            ended(connection, t);
        }

        @Override
        public void onCompleted() {
            ended(connection, null);
        }
    }

    /** The kubelet's Registration service. */
    private final class RegistrationService extends RegistrationGrpc.RegistrationImplBase {
        @Override
        public void register(RegisterRequest request, StreamObserver<Empty> response) {
            long since;
            lock.lock();
            try {
                registrations.add(Registration.of(request));
                since = generation;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
            if (!"v1beta1".equals(request.getVersion())) {
                response.onError(Status.INVALID_ARGUMENT.withDescription("unsupported version "
                        + request.getVersion()).asException());
                return;
            }
            if (!request.getResourceName().contains("/") || request.getEndpoint().contains("/")
                    || request.getEndpoint().isEmpty()) {
                response.onError(Status.INVALID_ARGUMENT.withDescription("invalid resource name or endpoint: "
                        + request.getResourceName() + ", " + request.getEndpoint()).asException());
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
