package dev.vgpu.deviceplugin;

import dev.vgpu.core.Device;
import dev.vgpu.core.Resource;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.internal.Guarded;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginOptions;
import dev.vgpu.kubelet.api.v1beta1.ListAndWatchResponse;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The device plugin of one resource: its lifecycle (start, restart, stop) and the decisions of every check, its
 * gRPC server on {@code kubevirt-<name>.sock} ({@link PluginServer}; a cut name when that path would not fit, see
 * {@link PluginSockets}), its registration, its ListAndWatch streams and the health of its devices. When the device-plugin directory leaves no room for any socket name, the plugin says so once at start
 * and never serves.
 *
 * <p>Threads (docs/ARCHITECTURE.md, "Threads and mutable state"): every field but {@code view} is owned by the
 * manager's serial context, and every method runs there unless it says otherwise. Shutting a server down blocks,
 * so {@link #stop} hands that work back to its caller, and {@link #restart} runs it outside the context and posts
 * the re-serve back. gRPC threads read only {@code view} (immutable, republished after every change) and post new
 * streams to the context. A stopped plugin stays stopped: the manager makes a new one for a resource that comes back.
 */
final class ResourcePlugin {

    private static final Logger LOG = LoggerFactory.getLogger(ResourcePlugin.class);
    private static final DevicePluginOptions OPTIONS = DevicePluginOptions.newBuilder()
            .setPreStartRequired(false).setGetPreferredAllocationAvailable(true).build();

    private enum State { NEW, RUNNING, STOPPED }

    /**
     * What any thread may read about this plugin.
     *
     * @param advertised the devices and their health
     * @param serving    whether the server is up on its socket
     * @param registered whether the last registration succeeded and still holds
     */
    record View(AdvertisedDevices advertised, boolean serving, boolean registered) {
    }

    /**
     * What a check reads outside the context, taken in it: the plugin, its socket, its serve count then and its
     * devices.
     */
    record Probe(ResourcePlugin plugin, Optional<Path> socket, int served, List<Device> devices) {
    }

    /**
     * What a check read: the socket file's key (null when it is not a socket) and, when {@code devicesRead},
     * group-node presence per group and identity changes per device ({@code ""} when unchanged); a round of the
     * sockets only leaves the devices' health as it was.
     */
    record Checked(ResourcePlugin plugin, int served, Object socketKey, boolean devicesRead,
                   Map<String, Boolean> groupNodes, Map<String, String> identityChanges) {
    }

    private final ResourceName name;
    /** Empty when the device-plugin directory's path is too long for any socket name. */
    private final Optional<Path> socket;
    private final PluginEnvironment env;
    private final Registrar registrar;
    private final DevicePluginService service;
    private final DeviceListStreams streams;

    private final PluginServer server;

    private State state = State.NEW;
    /** An old server is shutting down outside the context; the plugin serves again once that is done. */
    private boolean restarting;
    private AdvertisedDevices advertised;
    /** Written only in the context; read by any thread. */
    private volatile View view;

    ResourcePlugin(Resource initial, PluginEnvironment env) {
        this.name = initial.name();
        this.socket = PluginSockets.path(env.pluginDir(), name);
        this.env = env;
        // Without a socket nothing is served, so nothing ever registers with the empty endpoint.
        this.streams = new DeviceListStreams(name.fullName(), env.context());
        this.registrar = new Registrar(name, socket.map(s -> s.getFileName().toString()).orElse(""), env, OPTIONS,
                this::republish, streams::kubeletMayOpen);
        this.service = new DevicePluginService(this, env);
        this.server = new PluginServer(name, socket, env.pluginDir(), env.kubeletClient());
        this.advertised = AdvertisedDevices.none().replace(initial.devices(), env.handovers()::groupNodePresent,
                env.gpuFaulty());
        this.view = new View(advertised, false, false);
    }

    /** Any thread. */
    ResourceName name() {
        return name;
    }

    /** Any thread. */
    Optional<Path> socket() {
        return socket;
    }

    static DevicePluginOptions options() {
        return OPTIONS;
    }

    /** Serves on the socket and registers (asynchronously, retrying). A failed bind is retried by checks. */
    void start() {
        if (state != State.NEW) {
            return;
        }
        state = State.RUNNING;
        logNumaMix(AdvertisedDevices.none(), advertised);
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
    }

    /** Swaps the device list: kept devices keep their health, new ones start healthy unless known bad. */
    void update(Resource next) {
        if (state == State.STOPPED) {
            return;
        }
        AdvertisedDevices before = advertised;
        publish(advertised.replace(next.devices(), env.handovers()::groupNodePresent, env.gpuFaulty()));
        logNumaMix(before, advertised);
    }

    /**
     * Sends an empty device list on every stream (the kubelet never redials an ended stream), then stops.
     *
     * @return what is left to do outside the context (see {@link #stop})
     */
    Runnable retire() {
        if (state == State.STOPPED) {
            return stop();
        }
        publish(AdvertisedDevices.none());
        return stop();
    }

    /**
     * Ends streams and registration and detaches the server. Idempotent.
     *
     * @return the blocking rest, for the caller to run outside the context: the server's shutdown and the deletion
     *         of its socket (waiting for a restart's shutdown still running)
     */
    Runnable stop() {
        if (state == State.NEW) {
            state = State.STOPPED;
            republish();
            return () -> { };
        }
        if (state == State.STOPPED) {
            return server.lastShutdown();
        }
        state = State.STOPPED;
        restarting = false;
        Runnable rest = detach(true);
        LOG.debug("Stopped {}", name);
        return rest;
    }

    /**
     * Serves on a fresh socket and registers again, keeping devices and health (the kubelet restarted, or the
     * socket was replaced): the old server shuts down outside the context, then the new one is bound here.
     */
    void restart(String why) {
        if (state != State.RUNNING || restarting) {
            return;
        }
        LOG.info("Restarting {}: {}", name, why);
        restarting = true;
        Runnable rest = detach(false);
        env.blocking().execute(Guarded.task("restart of " + name, () -> {
            rest.run();
            env.context().execute(this::restarted);
        }));
    }

    private void restarted() {
        if (state == State.RUNNING && restarting) {
            restarting = false;
            serveAndRegister();
        }
    }

    /** What a check needs to read outside the context. */
    Probe probe() {
        return new Probe(this, socket, server.served(), advertised.devices());
    }

    /**
     * The periodic and event-driven check, with what {@link PluginChecks} read outside the context: re-serve when the socket is gone or no
     * longer the one this plugin bound (a file renamed over it, another socket moved there), re-register when the
     * kubelet's generation changed since the last registration, and publish the health read.
     */
    void checked(Checked read, int kubelet) {
        if (state != State.RUNNING) {
            return;
        }
        if (!restarting) {
            if (!server.serving()) {
                serveAndRegister();
            } else if (server.replaced(read.served(), read.socketKey())) {
                restart("socket " + socket.get() + " was deleted or replaced by another file");
            } else {
                registrar.kubeletSeen(kubelet);
            }
        }
        if (read.devicesRead()) {
            publish(advertised.withChecks(read.groupNodes(), read.identityChanges()));
        }
    }

    /** Sets each device's GPU-fault flag to what {@code faulty} says now (the GPU faults changed). */
    void gpuFaults(java.util.function.Predicate<Device> faulty) {
        publish(advertised.withGpuFaults(faulty));
    }

    /** The current advertisement; any thread. */
    AdvertisedDevices advertised() {
        return view.advertised();
    }

    /** Whether the plugin is running (started and not stopped). */
    boolean isRunning() {
        return state == State.RUNNING;
    }

    /**
     * Adds a ListAndWatch stream, which gets the current list and every later one; called on a gRPC thread, it wires
     * the stream there and posts the rest to the context.
     */
    void openStream(ServerCallStreamObserver<ListAndWatchResponse> observer) {
        DeviceListStream stream = streams.prepare(observer);
        env.context().execute(() -> {
            if (!server.serving()) {
                // The server is shutting down (stop or restart): the kubelet dials the new server instead.
                stream.refuse(Status.UNAVAILABLE.withDescription(name + " is restarting or stopped")
                        .asRuntimeException());
                return;
            }
            streams.open(stream, advertised.toResponse());
        });
    }

    /** Whether the last registration succeeded and still holds; any thread. */
    boolean registered() {
        return view.registered();
    }

    /** What this plugin is doing now; any thread, never waits. */
    ResourceStatus status() {
        View now = view;
        AdvertisedDevices devices = now.advertised();
        int healthy = (int) devices.devices().stream().filter(d -> devices.isHealthy(d.id())).count();
        return new ResourceStatus(name, healthy, devices.devices().size() - healthy, now.registered(), now.serving());
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
        if (next.equals(advertised)) {
            return;
        }
        List<String> flips = advertised.healthFlips(next);
        advertised = next;
        republish();
        for (String id : flips) {
            if (next.isHealthy(id)) {
                LOG.info("Device {} of {} is healthy again", id, name);
            } else {
                Optional<String> group = next.devices().stream().filter(d -> d.id().equals(id)).findFirst()
                        .flatMap(Device::iommuGroup);
                LOG.warn("Device {} of {} is unhealthy: {}", id, name, next.health().get(id).why(group));
            }
        }
        streams.publish(next.toResponse());
    }

    /** Publishes the view for other threads after a change. */
    private void republish() {
        view = new View(advertised, server.serving(), registrar.registered());
    }

    private void serveAndRegister() {
        boolean serving = server.serve(service);
        republish();
        if (serving) {
            registrar.request();
        }
    }

    /**
     * Ends the streams and registration and detaches the server, in the context.
     *
     * @return the blocking rest for outside the context ({@link PluginServer#detach})
     */
    private Runnable detach(boolean graceful) {
        registrar.cancel();
        streams.endAll(graceful);
        Runnable rest = server.detach(graceful);
        republish();
        return rest;
    }
}
