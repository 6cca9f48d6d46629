package dev.vgpu.deviceplugin;

import dev.vgpu.attach.Handovers;
import dev.vgpu.core.Durations;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Plan;
import dev.vgpu.core.Reconciler;
import dev.vgpu.core.Resource;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.SnapshotSink;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Host;
import dev.vgpu.deviceplugin.transport.UnixDomainTransport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves every resource of the current {@link Snapshot} to the kubelet: one device-plugin server per resource on
 * {@code <device-plugin-dir>/kubevirt-<name>.sock} (a shorter name when that path would be longer than a unix socket
 * path may be, see {@link #socket}), registered with {@code kubelet.sock}.
 * <pre>{@code
 * try (PluginManager plugins = PluginManager.builder().hostRoot(Path.of("/")).sources(sources).build()) {
 *     Snapshot first = scanner.scan(Snapshot.empty());
 *     Plan plan = plugins.apply(first);   // Add starts, Update swaps, Remove retires
 *     ...
 * }
 * }</pre>
 * Health of each device is the presence of {@code <host-root>/dev/vfio/<group>} (a directory watch plus a
 * periodic check) combined with GPU faults fed through {@link #markGpuUnhealthy}. The same checks re-serve and
 * re-register every resource when the kubelet restarts (its socket or ours is replaced).
 *
 * <p>Threads and state (see docs/ARCHITECTURE.md, "Threads and state"):
 * <ul>
 * <li>{@code apply} runs on the caller's thread (the rescan loop's); {@code applying} orders applies against each
 *     other and nothing else takes it. {@code lock} guards only the switch of {@code plugins} and {@code closed};
 *     no plugin is started, updated, retired or stopped while it is held, since those may wait for a server to
 *     shut down. {@code plugins} is republished as an immutable map, read by any thread without a lock.</li>
 * <li>Two scheduler threads ({@code vgpu-dp-scheduler-N}) run the checks ({@link PluginChecks}), registration
 *     attempts ({@link Registrar}, whose Register call is asynchronous, so a hung kubelet holds no thread) and
 *     the queued GPU-fault changes ({@link GpuFaults}, their one owner); one watch thread ({@code vgpu-dp-watch})
 *     only queues checks.</li>
 * <li>{@code markGpu…} may be called from any thread (the XID watcher's callback) and only queue work.</li>
 * <li>One transport ({@code vgpu-dp-grpc-io-1} and two {@code vgpu-dp-grpc-rpc-N}) carries every plugin server and
 *     the channels to the kubelet, so threads do not grow with resources; it ends in {@code close}. Each plugin's
 *     own state is guarded by its own locks ({@link ResourcePlugin}).</li>
 * </ul>
 */
public final class PluginManager implements SnapshotSink, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PluginManager.class);

    private final Path devicePluginDir;
    private final AtomicReference<Snapshot> snapshot = new AtomicReference<>(Snapshot.empty());
    private final GpuFaults faults;
    private final Object lock = new Object();
    /** Orders {@code apply} calls against each other; nothing else takes it (see the class comment). */
    private final ReentrantLock applying = new ReentrantLock();
    private final ScheduledThreadPoolExecutor scheduler;
    private final UnixDomainTransport kubeletClient;
    private final PluginEnvironment env;
    private final PluginChecks checks;

    private volatile SortedMap<ResourceName, ResourcePlugin> plugins = Collections.emptySortedMap();
    /** The kubelet socket seen by the last check round; owned by the check rounds (one at a time). */
    private Optional<KubeletSocket> lastKubelet = Optional.empty();
    private boolean closed;

    private PluginManager(Builder b) throws IOException {
        this.devicePluginDir = b.devicePluginDir;
        AtomicInteger threads = new AtomicInteger();
        this.scheduler = new ScheduledThreadPoolExecutor(2, r -> {
            Thread t = new Thread(r, "vgpu-dp-scheduler-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.scheduler.setRemoveOnCancelPolicy(true);
        // One event loop and one call executor for every plugin server and the kubelet client.
        this.kubeletClient = UnixDomainTransport.create("vgpu-dp-grpc", 1, 2);
        HostFiles files = new HostFiles(b.hostRoot);
        this.faults = new GpuFaults(files, () -> plugins.values(), scheduler);
        this.env = new PluginEnvironment(Handovers.forHost(Host.of(b.hostRoot), b.sources), b.devicePluginDir,
                snapshot::get, scheduler, kubeletClient, b.backoffInitial, b.backoffMax, faults::faulty, b.observer);
        try {
            this.checks = new PluginChecks(() -> plugins.values(), this::noticeKubelet, scheduler,
                    List.of(b.devicePluginDir, b.hostRoot.resolve("dev/vfio")), b.healthPollInterval.toNanos());
        } catch (IOException | RuntimeException e) {
            scheduler.shutdownNow();
            kubeletClient.close();
            throw e;
        }
        LOG.info("Device plugins: host root {}, device-plugin dir {}, health poll every {}, registration backoff "
                + "{} to {}", b.hostRoot, b.devicePluginDir, Durations.formatGo(b.healthPollInterval),
                Durations.formatGo(b.backoffInitial), Durations.formatGo(b.backoffMax));
    }

    /** A builder with the defaults: host root {@code /}, {@code /var/lib/kubelet/device-plugins}, 5 s poll. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Makes {@code next} the snapshot that Allocate reads and applies what changed since the current one, as
     * {@link Reconciler#plan} computes it (see {@link #apply(Snapshot, Plan)}).
     *
     * @param next the snapshot to serve
     * @return the plan that was applied; empty when nothing changed
     * @throws IllegalStateException after {@link #close()}
     */
    public Plan apply(Snapshot next) {
        Objects.requireNonNull(next, "next");
        applying.lock();
        try {
            Plan plan = Reconciler.plan(snapshot.get(), next);
            apply(next, plan);
            return plan;
        } finally {
            applying.unlock();
        }
    }

    /**
     * Makes {@code next} the snapshot that Allocate reads, then applies the plan's changes in order: {@code Add}
     * starts a plugin, {@code Update} swaps its device list (health kept for devices that stay), {@code Remove}
     * sends an empty list on its streams and stops it. Resources the plan does not name are not touched. Calls
     * are serialized; a change that fails is logged and the rest still apply.
     *
     * The plan must lead from the snapshot applied before to {@code next}; {@link #apply(Snapshot)} computes it.
     *
     * @throws IllegalStateException after {@link #close()}
     */
    @Override
    public void apply(Snapshot next, Plan plan) {
        Objects.requireNonNull(next, "next");
        Objects.requireNonNull(plan, "plan");
        applying.lock();
        try {
            List<Runnable> work = new ArrayList<>();
            synchronized (lock) {
                if (closed) {
                    throw new IllegalStateException("plugin manager is closed");
                }
                snapshot.set(next);
                SortedMap<ResourceName, ResourcePlugin> map = new TreeMap<>(plugins);
                for (Plan.Change change : plan.changes()) {
                    try {
                        work.add(plan(change, map));
                    } catch (RuntimeException e) {
                        LOG.error("Could not apply {} to {}: {}", change.getClass().getSimpleName(),
                                change.resource(), e.toString(), e);
                    }
                }
                plugins = Collections.unmodifiableSortedMap(map);
            }
            // Outside the lock: starting, updating and retiring plugins may wait for a server to shut down.
            for (Runnable step : work) {
                try {
                    step.run();
                } catch (RuntimeException e) {
                    LOG.error("Could not apply a change: {}", e.toString(), e);
                }
            }
        } finally {
            applying.unlock();
        }
    }

    /** Changes the map for one change (under {@code lock}) and returns what to do to the plugin afterwards. */
    private Runnable plan(Plan.Change change, SortedMap<ResourceName, ResourcePlugin> map) {
        ResourcePlugin existing = map.get(change.resource());
        if (change instanceof Plan.Remove) {
            if (existing == null) {
                return () -> { };
            }
            map.remove(change.resource());
            return () -> {
                existing.retire();
                LOG.info("Removed {}", change.resource());
            };
        }
        Resource next = change instanceof Plan.Add add ? add.next() : ((Plan.Update) change).next();
        if (existing != null) {
            return () -> {
                List<String> before = existing.advertised().devices().stream().map(Device::id).toList();
                existing.update(next);
                TreeSet<String> in = new TreeSet<>(next.ids());
                in.removeAll(before);
                TreeSet<String> out = new TreeSet<>(before);
                out.removeAll(next.ids());
                LOG.info("Updated {}: {} devices, in {}, out {}", next.name(), next.devices().size(), in, out);
            };
        }
        ResourcePlugin plugin = new ResourcePlugin(next, env);
        map.put(next.name(), plugin);
        return () -> {
            plugin.start();
            LOG.info("Added {} with {} devices {}", next.name(), next.devices().size(), next.ids());
        };
    }

    /**
     * Marks unhealthy every device whose parent is {@code gpu} (its VFs and mdevs) and the device that is
     * {@code gpu} itself, and the devices on its SR-IOV VFs (an mdev whose parent is a VF of {@code gpu}), until
     * {@link #markGpuHealthy}. Devices added later on that GPU start unhealthy too.
     * Meant for NVML XID events; may be called from any thread, and returns at once: the change (which reads
     * the GPU's VFs in sysfs) is queued and applied in order on the manager's scheduler, without any lock held.
     */
    public void markGpuUnhealthy(PciAddress gpu, String reason) {
        Objects.requireNonNull(gpu, "gpu");
        faults.markUnhealthy(gpu, reason);
    }

    /**
     * Clears a fault set by {@link #markGpuUnhealthy}; devices whose group node is present become healthy. Queued
     * like {@link #markGpuUnhealthy}: returns at once.
     */
    public void markGpuHealthy(PciAddress gpu) {
        Objects.requireNonNull(gpu, "gpu");
        faults.markHealthy(gpu);
    }

    /**
     * What every served resource is doing now, sorted by name: devices by health, registration, server state.
     * Cheap and non-blocking; meant for metrics and readiness checks.
     */
    public List<ResourceStatus> status() {
        return plugins.values().stream().map(ResourcePlugin::status).toList();
    }

    /** Runs before each check round, on the scheduler: reports a new kubelet socket once per restart. */
    private void noticeKubelet() {
        Optional<KubeletSocket> now = KubeletSocket.at(env.kubeletSocket());
        if (now.isPresent() && !now.equals(lastKubelet)) {
            if (lastKubelet.isPresent()) {
                LOG.info("The kubelet restarted: {} is new", env.kubeletSocket());
                env.observer().kubeletRestarted();
            }
            lastKubelet = now;
        }
    }

    /** The resources served now, sorted. */
    public SortedSet<ResourceName> running() {
        return Collections.unmodifiableSortedSet(new TreeSet<>(plugins.keySet()));
    }

    /** The device-plugin directory this manager serves in. */
    public Path devicePluginDir() {
        return devicePluginDir;
    }

    /**
     * The socket that the plugin of {@code name} serves on in this manager's directory (whether or not it is served
     * now): {@code kubevirt-<name>.sock} when that path fits in the 107 bytes of a unix socket path, else the cut
     * name of {@link ResourceName#socketFileName(int)}. Its file name is the {@code Endpoint} sent to the kubelet.
     *
     * @return the socket, empty when the directory's path leaves no room for any socket name (such a resource is
     *         never served; its start logs why)
     */
    public Optional<Path> socket(ResourceName name) {
        return PluginSockets.path(devicePluginDir, Objects.requireNonNull(name, "name"));
    }

    /**
     * Stops every plugin (without retiring its resource: a restarted daemon registers it again), deletes its
     * socket and ends every thread this manager started. Idempotent.
     */
    @Override
    public void close() {
        Collection<ResourcePlugin> running;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            running = plugins.values();
            plugins = Collections.emptySortedMap();
        }
        // Outside the lock: each stop may wait for its server to shut down.
        running.forEach(ResourcePlugin::stop);
        checks.close();
        scheduler.shutdownNow();
        try {
            if (!scheduler.awaitTermination(20, TimeUnit.SECONDS)) {
                LOG.warn("Scheduler threads did not end within 20 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        kubeletClient.close();
        LOG.info("Device plugins stopped");
    }

    /** Package-private view for tests: the plugin serving {@code name}. */
    ResourcePlugin plugin(ResourceName name) {
        return plugins.get(name);
    }

    /** Configures a {@link PluginManager}; not thread-safe. */
    public static final class Builder {
        private Path hostRoot = Path.of("/");
        private Path devicePluginDir = Path.of("/var/lib/kubelet/device-plugins");
        private Duration healthPollInterval = Duration.ofSeconds(5);
        private Duration backoffInitial = Duration.ofSeconds(1);
        private Duration backoffMax = Duration.ofSeconds(30);
        private List<DeviceSource> sources = List.of();
        private PluginObserver observer = PluginObserver.NONE;

        private Builder() {
        }

        /** Hears RPC outcomes, registrations and kubelet restarts (for metrics); none by default. */
        public Builder observer(PluginObserver value) {
            observer = Objects.requireNonNull(value, "observer");
            return this;
        }

        /**
         * The sources whose devices this manager serves: Allocate and the periodic health check ask each device's
         * source whether it is still what was advertised ({@link DeviceSource#recheck}). Devices of sources not
         * given here are trusted as the snapshot says.
         */
        public Builder sources(List<? extends DeviceSource> value) {
            sources = List.copyOf(value);
            return this;
        }

        /** The directory that stands for the host's {@code /} when reading sysfs and devfs. */
        public Builder hostRoot(Path value) {
            hostRoot = Objects.requireNonNull(value, "hostRoot");
            return this;
        }

        /** Where {@code kubelet.sock} is and plugin sockets are created. */
        public Builder devicePluginDir(Path value) {
            devicePluginDir = Objects.requireNonNull(value, "devicePluginDir");
            return this;
        }

        /** How often health and sockets are checked besides the directory watches; positive. */
        public Builder healthPollInterval(Duration value) {
            if (value == null || value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException("health poll interval must be positive, got " + value);
            }
            healthPollInterval = value;
            return this;
        }

        /** Registration retry delays: starts at {@code initial}, doubles, never above {@code max}. */
        public Builder registrationBackoff(Duration initial, Duration max) {
            if (initial == null || max == null || initial.isNegative() || initial.isZero()
                    || max.compareTo(initial) < 0) {
                throw new IllegalArgumentException("registration backoff needs 0 < initial <= max, got " + initial
                        + " and " + max);
            }
            backoffInitial = initial;
            backoffMax = max;
            return this;
        }

        /**
         * Starts the manager's threads (no plugin yet).
         *
         * @throws UncheckedIOException when the directory watch cannot be created
         */
        public PluginManager build() {
            try {
                return new PluginManager(this);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot watch " + devicePluginDir + ": " + e.getMessage(), e);
            }
        }
    }
}
