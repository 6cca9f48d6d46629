package dev.vgpu.deviceplugin;

import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Resource;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.deviceplugin.transport.UnixDomainTransport;
import dev.vgpu.deviceplugin.v1beta1.DevicePluginOptions;
import dev.vgpu.deviceplugin.v1beta1.ListAndWatchResponse;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The device plugin of one resource: its gRPC server on {@code kubevirt-<name>.sock} (a cut name when that path
 * would not fit, see {@link PluginSockets}), its registration, its ListAndWatch streams and the health of its
 * devices. When the device-plugin directory leaves no room for any socket name, the plugin says so once at start
 * and never serves.
 *
 * <p>Threads and state. {@code lifecycle} serializes start, stop, retire, restart and update (callers: the
 * manager's apply and close, and the scheduler's checks); it guards {@code state}, {@code server}, {@code boundSocket} and
 * {@code transport}. {@code stateLock} guards {@code advertised} and orders every publication to the streams,
 * so the last list offered is always the current one; it is taken inside {@code lifecycle}, never the other way,
 * and nothing blocks while holding it. {@code streams} is a concurrent set touched by gRPC threads. A stopped
 * plugin stays stopped: the manager makes a new one for a resource that comes back.
 */
final class ResourcePlugin {

    private static final Logger LOG = LoggerFactory.getLogger(ResourcePlugin.class);
    private static final DevicePluginOptions OPTIONS = DevicePluginOptions.newBuilder()
            .setPreStartRequired(false).setGetPreferredAllocationAvailable(true).build();

    private enum State { NEW, RUNNING, STOPPED }

    private final ResourceName name;
    /** Empty when the device-plugin directory's path is too long for any socket name. */
    private final Optional<Path> socket;
    private final PluginEnvironment env;
    private final Registrar registrar;
    private final DevicePluginService service;
    private final ReentrantLock lifecycle = new ReentrantLock();
    private final Object stateLock = new Object();
    private final DeviceListStreams streams;

    private State state = State.NEW;
    private Server server;
    private String serveFailure = "";
    /** Whether the server is up on its socket; written under {@code lifecycle}, read by status without it. */
    private volatile boolean serving;
    /** Whether ListAndWatch streams may be opened (a server is up and not shutting down); guarded by stateLock. */
    private boolean acceptingStreams;
    private UnixDomainTransport transport;
    /** The file key (device and inode) of the socket this plugin bound; null while not serving. */
    private Object boundSocket;
    private AdvertisedDevices advertised = AdvertisedDevices.none();

    ResourcePlugin(Resource initial, PluginEnvironment env) {
        this.name = initial.name();
        this.socket = PluginSockets.path(env.pluginDir(), name);
        this.env = env;
        // Without a socket nothing is served, so nothing ever registers with the empty endpoint.
        this.registrar = new Registrar(name, socket.map(s -> s.getFileName().toString()).orElse(""), env, OPTIONS);
        this.service = new DevicePluginService(this, env);
        this.streams = new DeviceListStreams(name.fullName());
        this.advertised = AdvertisedDevices.none().replace(initial.devices(), env.files()::groupNodePresent,
                env.gpuFaulty());
    }

    ResourceName name() {
        return name;
    }

    Optional<Path> socket() {
        return socket;
    }

    static DevicePluginOptions options() {
        return OPTIONS;
    }

    /** Serves on the socket and registers (asynchronously, retrying). A failed bind is retried by checks. */
    void start() {
        lifecycle.lock();
        try {
            if (state != State.NEW) {
                return;
            }
            state = State.RUNNING;
            transport = env.kubeletClient(); // shared by every plugin; the manager closes it
            logNumaMix(AdvertisedDevices.none(), advertised());
            if (socket.isEmpty()) {
                LOG.error("Cannot serve {}: the device-plugin directory {} takes {} of the {} bytes a unix socket "
                        + "path may have, which leaves {} for the socket file name, less than the {} of the "
                        + "shortest (kubevirt-<hash>.sock); this resource is not advertised", name, env.pluginDir(),
                        PluginSockets.directoryBytes(env.pluginDir()), UnixDomainTransport.MAX_PATH_BYTES,
                        Math.max(0, PluginSockets.budget(env.pluginDir())), ResourceName.SHORTEST_SOCKET_FILE_NAME_BYTES);
                return;
            }
            if (!socket.get().getFileName().toString().equals(name.socketFileName())) {
                LOG.info("{} serves on {}: {} would make the path longer than {} bytes", name, socket.get(),
                        name.socketFileName(), UnixDomainTransport.MAX_PATH_BYTES);
            }
            serveAndRegister();
        } finally {
            lifecycle.unlock();
        }
    }

    /** Swaps the device list: kept devices keep their health, new ones start healthy unless known bad. */
    void update(Resource next) {
        lifecycle.lock();
        try {
            if (state == State.STOPPED) {
                return;
            }
            // Under stateLock: a GPU-fault mark (queued on the scheduler) must not be lost between read and publish.
            synchronized (stateLock) {
                AdvertisedDevices before = advertised;
                publish(advertised.replace(next.devices(), env.files()::groupNodePresent, env.gpuFaulty()));
                logNumaMix(before, advertised);
            }
        } finally {
            lifecycle.unlock();
        }
    }

    /** Sends an empty device list on every stream (the kubelet never redials an ended stream), then stops. */
    void retire() {
        lifecycle.lock();
        try {
            if (state == State.STOPPED) {
                return;
            }
            publish(AdvertisedDevices.none());
            stopLocked();
        } finally {
            lifecycle.unlock();
        }
    }

    /** Ends streams, registration and the server, deletes the socket and ends this plugin's threads. Idempotent. */
    void stop() {
        lifecycle.lock();
        try {
            stopLocked();
        } finally {
            lifecycle.unlock();
        }
    }

    /** Serves on a fresh socket and registers again, keeping devices and health (the kubelet restarted). */
    void restart(String why) {
        lifecycle.lock();
        try {
            if (state != State.RUNNING) {
                return;
            }
            LOG.info("Restarting {}: {}", name, why);
            shutdownServer(false);
            serveAndRegister();
        } finally {
            lifecycle.unlock();
        }
    }

    /**
     * The periodic and event-driven check: re-serve when the socket is gone or no longer the one this plugin bound
     * (a file renamed over it, another socket moved there), re-register when the kubelet socket
     * changed since the last registration, and re-read group-node health.
     */
    void check() {
        lifecycle.lock();
        try {
            if (state != State.RUNNING) {
                return;
            }
            if (server == null) {
                serveAndRegister();
            } else if (!socketIsOurs()) {
                restart("socket " + socket.get() + " was deleted or replaced by another file");
            } else {
                registrar.kubeletSeen(KubeletSocket.at(env.kubeletSocket()));
            }
            checkHealth();
        } finally {
            lifecycle.unlock();
        }
    }

    /**
     * Re-reads the group nodes and asks each device's source whether it is still what was advertised, then
     * publishes when a device's health flipped. The reads happen before {@code stateLock} is taken, so streams
     * and GPU-fault marks never wait for sysfs.
     */
    void checkHealth() {
        AdvertisedDevices current = advertised();
        Map<String, Boolean> groupNodes = new HashMap<>();
        Map<String, String> identityChanges = new HashMap<>();
        for (Device device : current.devices()) {
            device.iommuGroup().ifPresent(g -> groupNodes.computeIfAbsent(g, env.files()::groupNodePresent));
            DeviceCheck check = env.rechecks().recheck(device);
            identityChanges.put(device.id(), check.unchanged() ? "" : check.describe(device.id()));
        }
        synchronized (stateLock) {
            publish(advertised.withChecks(groupNodes, identityChanges));
        }
    }

    /** Marks (or clears) a GPU fault for the devices of {@code gpu}; true when any device of it is here. */
    boolean gpuFault(PciAddress gpu, boolean faulty) {
        synchronized (stateLock) {
            boolean mine = advertised.devices().stream().anyMatch(d -> AdvertisedDevices.belongsTo(d, gpu));
            publish(advertised.withGpuFault(gpu, faulty));
            return mine;
        }
    }

    /** The current advertisement (for the service and tests). */
    AdvertisedDevices advertised() {
        synchronized (stateLock) {
            return advertised;
        }
    }

    /** Whether the plugin is running (started and not stopped). */
    boolean isRunning() {
        lifecycle.lock();
        try {
            return state == State.RUNNING;
        } finally {
            lifecycle.unlock();
        }
    }

    /** Adds a ListAndWatch stream and sends it the current list; called on a gRPC thread. */
    void openStream(ServerCallStreamObserver<ListAndWatchResponse> observer) {
        synchronized (stateLock) {
            if (!acceptingStreams) {
                // The server is shutting down (stop or restart): the kubelet dials the new server instead.
                observer.onError(Status.UNAVAILABLE.withDescription(name + " is restarting or stopped")
                        .asRuntimeException());
                return;
            }
            streams.open(observer, advertised.toResponse());
        }
    }

    /** Whether the last registration succeeded and still holds. */
    boolean registered() {
        return registrar.registered();
    }

    /** What this plugin is doing now; never waits for a lifecycle change in progress. */
    ResourceStatus status() {
        AdvertisedDevices now = advertised();
        int healthy = (int) now.devices().stream().filter(d -> now.isHealthy(d.id())).count();
        return new ResourceStatus(name, healthy, now.devices().size() - healthy, registered(), serving);
    }

    /** The number of open streams (for tests). */
    int openStreams() {
        return streams.open();
    }

    /**
     * Logs when the resource starts or stops mixing devices with and without a NUMA node (only the device list
     * decides that, so start and update call this, not health changes or streams).
     */
    private void logNumaMix(AdvertisedDevices before, AdvertisedDevices after) {
        List<String> was = before.withoutNumaNodeWhenMixed();
        List<String> now = after.withoutNumaNodeWhenMixed();
        if (was.isEmpty() && !now.isEmpty()) {
            LOG.warn("{}: no device carries NUMA topology, because {} of its {} devices have no NUMA node ({}); the "
                    + "kubelet's topology manager would never count those", name, now.size(), after.devices().size(),
                    RequestLimits.sample(now));
        } else if (!was.isEmpty() && now.isEmpty()) {
            LOG.info("{}: its devices no longer mix known and unknown NUMA nodes; {}", name,
                    after.withholdsTopology() ? "no device has a NUMA node" : "each carries its NUMA node again");
        }
    }

    private void publish(AdvertisedDevices next) {
        synchronized (stateLock) {
            if (next.equals(advertised)) {
                return;
            }
            List<String> flips = advertised.healthFlips(next);
            advertised = next;
            for (String id : flips) {
                if (next.isHealthy(id)) {
                    LOG.info("Device {} of {} is healthy again", id, name);
                } else {
                    AdvertisedDevices.DeviceHealth health = next.health().get(id);
                    LOG.warn("Device {} of {} is unhealthy: {}", id, name, !health.identityChange().isEmpty()
                            ? health.identityChange() : health);
                }
            }
            streams.publish(next.toResponse());
        }
    }

    private void serveAndRegister() {
        if (socket.isEmpty()) {
            return; // said once at start
        }
        try {
            PluginDirectory.create(env.pluginDir());
            synchronized (stateLock) {
                acceptingStreams = true;
            }
            server = transport.serve(socket.get(), List.of(service));
            boundSocket = socketKey();
            serveFailure = "";
            serving = true;
            LOG.debug("Serving {} on {}", name, socket.get());
            registrar.request();
        } catch (IOException e) {
            server = null;
            serving = false;
            if (!e.getMessage().equals(serveFailure)) {
                LOG.warn("Cannot serve {} on {}: {}; retrying at every check", name, socket.get(), e.getMessage());
            }
            serveFailure = e.getMessage();
        }
    }

    /**
     * Whether the socket path is still the socket this plugin bound: a socket (not a file renamed over it) with the
     * same file key (device and inode) as right after binding (not another process's socket moved there).
     */
    private boolean socketIsOurs() {
        Object now = socketKey();
        return now != null && now.equals(boundSocket);
    }

    /** The socket path's file key when it is a socket (links not followed); null when it is anything else. */
    private Object socketKey() {
        if (socket.isEmpty()) {
            return null;
        }
        try {
            BasicFileAttributes attributes = Files.readAttributes(socket.get(), BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            if (!attributes.isOther()) {
                return null;
            }
            Object key = attributes.fileKey();
            return key != null ? key : socket.get();
        } catch (IOException e) {
            return null;
        }
    }

    private void stopLocked() {
        if (state == State.NEW) {
            state = State.STOPPED;
            return;
        }
        if (state == State.STOPPED) {
            return;
        }
        state = State.STOPPED;
        registrar.cancel();
        shutdownServer(true);
        transport = null;
        LOG.debug("Stopped {}", name);
    }

    /** Ends the streams and the server and deletes the socket file. */
    private void shutdownServer(boolean graceful) {
        serving = false;
        registrar.cancel();
        synchronized (stateLock) {
            acceptingStreams = false;
            streams.endAll(graceful);
        }
        if (server != null) {
            try {
                if (graceful) {
                    server.shutdown();
                    if (!server.awaitTermination(1, TimeUnit.SECONDS)) {
                        server.shutdownNow();
                    }
                } else {
                    server.shutdownNow();
                }
                server.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                server.shutdownNow();
                Thread.currentThread().interrupt();
            }
            server = null;
        }
        // Streams a call registered while the server shut down were cancelled with it; forget them now.
        streams.endAll(false);
        boundSocket = null;
        if (socket.isPresent()) {
            try {
                Files.deleteIfExists(socket.get());
            } catch (IOException e) {
                LOG.warn("Cannot delete socket {} of {}: {}", socket.get(), name, e.getMessage());
            }
        }
    }
}
