package dev.vgpu.deviceplugin;

import dev.vgpu.core.internal.GoDurations;
import dev.vgpu.attach.GpuFaults;
import dev.vgpu.attach.Handovers;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Plan;
import dev.vgpu.core.Reconciler;
import dev.vgpu.core.Resource;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.SnapshotSink;
import dev.vgpu.core.internal.SerialContext;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Host;
import dev.vgpu.hostfiles.HostFiles;
import dev.vgpu.kubelet.api.transport.ServerLimits;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginConstants;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
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
 * <p>Threads and state (docs/ARCHITECTURE.md, "Threads and mutable state"): one serial context over the scheduler
 * owns every mutable thing of the adapter: the plugin map ({@link ServedPlugins}, which applies plans), each plugin's server, streams, health and registration,
 * the kubelet's memory and the GPU faults. Every state change (apply, watch events, polls, XID marks, Register
 * answers, restarts) is a task posted to it, from whatever thread it starts on. Blocking work runs outside it and
 * posts its result back: server shutdowns on the caller of {@code apply}/{@code close} (or, for a restart, on the
 * scheduler), sysfs reads of checks and GPU faults on two lanes of their own. Other threads read only what the
 * context publishes, immutable: the snapshot Allocate reads with the plugin map, and each plugin's
 * view (its advertised list, serving and registered). The one transport ({@code vgpu-dp-grpc-io-1} and two
 * {@code vgpu-dp-grpc-rpc-N}) carries every plugin server and the channels to the kubelet, so threads do not grow
 * with resources; it ends in {@code close}.
 */
public final class PluginManager implements SnapshotSink, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PluginManager.class);

    private final Path devicePluginDir;
    private final ScheduledExecutorService scheduler;
    private final boolean ownScheduler;
    private final SerialContext context;
    /** Lists a faulty GPU's VFs outside the context, in the order the marks were made. */
    private final SerialContext faultLane;
    private final UnixDomainTransport kubeletClient;
    /** The host read for rechecks and a faulty GPU's VFs: its root and reader. */
    private final Host host;
    private final PluginEnvironment env;
    private final PluginChecks checks;

    // Owned by the context.
    private final ServedPlugins plugins = new ServedPlugins(this::newPlugin);
    private final GpuFaults faults;

    private PluginManager(Builder b) throws IOException {
        this.devicePluginDir = b.devicePluginDir;
        ThreadFactory threads = b.threads.orElse(Thread::new);
        this.ownScheduler = b.scheduler.isEmpty();
        this.scheduler = b.scheduler.orElseGet(() -> defaultScheduler(threads));
        this.context = new SerialContext("device-plugin state", scheduler);
        this.faultLane = new SerialContext("GPU fault listing", scheduler);
        this.faults = new GpuFaults(context::schedule, faultLane, b.gpuProbe, b.gpuRecovery,
                () -> plugins.values().stream().flatMap(p -> p.advertised().devices().stream()).toList(),
                this::applyGpuFaults);
        // One event loop and one call executor for every plugin server and the kubelet client.
        this.kubeletClient = b.threads.map(t -> UnixDomainTransport.create("vgpu-dp-grpc", 1, 2, ServerLimits.DEFAULT, t))
                .orElseGet(() -> UnixDomainTransport.create("vgpu-dp-grpc", 1, 2));
        this.host = Host.of(b.hostRoot, b.files.orElseGet(HostFiles::load));
        this.env = new PluginEnvironment(Handovers.forHost(host, b.sources), b.devicePluginDir, plugins::snapshot, context,
                scheduler, new KubeletSocket(b.devicePluginDir.resolve(DevicePluginConstants.KUBELET_SOCKET), b.observer),
                kubeletClient, b.backoffInitial, b.backoffMax, faults::faulty,
                b.observer, b.clock);
        try {
            this.checks = new PluginChecks(env, plugins::values, new SerialContext("device-plugin check", scheduler),
                    b.devicePluginDir, List.of(b.devicePluginDir, b.hostRoot.resolve("dev/vfio")),
                    b.healthPollInterval.toNanos(), threads);
        } catch (IOException | RuntimeException e) {
            if (ownScheduler) {
                scheduler.shutdownNow();
            }
            kubeletClient.close();
            throw e;
        }
        // The first check at once, not after a poll interval: readiness knows the kubelet's socket from the start.
        checks.request();
        LOG.info("Device plugins: host root {}, device-plugin dir {}, health poll every {}, registration backoff "
                + "{} to {}, GPU fault recovery {}", b.hostRoot, b.devicePluginDir,
                GoDurations.format(b.healthPollInterval), GoDurations.format(b.backoffInitial),
                GoDurations.format(b.backoffMax), b.gpuRecovery.isZero() ? "off"
                        : "after " + GoDurations.format(b.gpuRecovery) + " quiet");
    }

    /** Two daemon threads, {@code vgpu-dp-scheduler-1..2}: the context and its lanes never need more. */
    private static ScheduledExecutorService defaultScheduler(ThreadFactory threads) {
        int[] made = {0};
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(2, r -> {
            Thread t = Objects.requireNonNull(threads.newThread(r), "the thread factory made no thread");
            t.setName("vgpu-dp-scheduler-" + ++made[0]);
            t.setDaemon(true);
            return t;
        });
        scheduler.setRemoveOnCancelPolicy(true);
        // Both threads now, on this thread: the factory's counter is then touched by one thread only.
        scheduler.prestartAllCoreThreads();
        return scheduler;
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
        List<Runnable> rest = new ArrayList<>();
        Plan plan = context.call(() -> {
            Plan p = plugins.plan(next);
            rest.addAll(plugins.apply(next, p));
            return p;
        });
        finishOutside(rest);
        return plan;
    }

    /**
     * Makes {@code next} the snapshot that Allocate reads, then applies the plan's changes in order: {@code Add}
     * starts a plugin, {@code Update} swaps its device list (health kept for devices that stay), {@code Remove}
     * sends an empty list on its streams and stops it. Resources the plan does not name are not touched. Changes
     * run in the manager's context, one apply after another; the servers that {@code Remove} stops shut down on
     * the calling thread before this returns. A change that fails is logged and the rest still apply.
     *
     * The plan must lead from the snapshot applied before to {@code next}; {@link #apply(Snapshot)} computes it.
     *
     * @throws IllegalStateException after {@link #close()}
     */
    @Override
    public void apply(Snapshot next, Plan plan) {
        Objects.requireNonNull(next, "next");
        Objects.requireNonNull(plan, "plan");
        finishOutside(context.call(() -> plugins.apply(next, plan)));
    }

    /** A new plugin for {@code resource}, not started yet ({@link ServedPlugins} starts it, in the context). */
    private ResourcePlugin newPlugin(Resource resource) {
        return new ResourcePlugin(resource, env);
    }

    /** Runs the blocking rest of a context step on the calling thread, each step on its own. */
    private static void finishOutside(List<Runnable> rest) {
        for (Runnable step : rest) {
            try {
                step.run();
            } catch (RuntimeException e) {
                LOG.error("Could not apply a change: {}", e.toString(), e);
            }
        }
    }

    /**
     * Marks unhealthy every device whose parent is {@code gpu} (its VFs and mdevs) and the device that is
     * {@code gpu} itself, and the devices on its SR-IOV VFs (an mdev whose parent is a VF of {@code gpu}), until
     * {@link #markGpuHealthy} or, with a recovery period ({@link Builder#gpuFaultRecovery}), until that long has passed
     * without another mark and the {@link GpuFaults.Probe} says the GPU answers. Devices added later on that GPU start
     * unhealthy too. Meant for NVML XID events; may be called from any thread, and returns at once: the GPU's VFs are
     * listed in sysfs on the manager's fault lane, then the marks reach the plugins in the order they were made.
     */
    public void markGpuUnhealthy(PciAddress gpu, String reason) {
        markGpuUnhealthy(gpu, OptionalInt.empty(), reason);
    }

    /**
     * Like {@link #markGpuUnhealthy(PciAddress, String)}, for a fault NVML attributed to one GPU instance (MIG) of the
     * GPU: then only the devices on that instance ({@link Device#gpuInstance()}) are marked, and those whose source
     * knows no instance. An empty instance marks every device of the GPU.
     *
     * @param gpu         the physical GPU
     * @param gpuInstance the GPU instance NVML named, if any
     * @param reason      for the log, e.g. {@code critical XID 79}
     */
    public void markGpuUnhealthy(PciAddress gpu, OptionalInt gpuInstance, String reason) {
        Objects.requireNonNull(gpu, "gpu");
        Objects.requireNonNull(gpuInstance, "gpuInstance");
        faultLane.execute(() -> {
            List<PciAddress> vfs = GpuFaults.virtualFunctions(host, gpu);
            context.execute(() -> faults.markUnhealthy(gpu, vfs, gpuInstance, reason));
        });
    }

    /**
     * Clears a fault set by {@link #markGpuUnhealthy}; devices whose group node is present become healthy. Queued
     * like {@link #markGpuUnhealthy}, after the marks made before it: returns at once.
     */
    public void markGpuHealthy(PciAddress gpu) {
        Objects.requireNonNull(gpu, "gpu");
        faultLane.execute(() -> context.execute(() -> faults.markHealthy(gpu)));
    }

    /**
     * Changes the GPU fault recovery period (a configuration reload): every GPU with a fault now counts the new period
     * from now; zero turns recovery off (faults stay until {@link #markGpuHealthy}). Returns at once; applies in the
     * manager's context after what was posted before.
     *
     * @param quiet zero or positive
     */
    public void recoverGpuFaultsAfter(Duration quiet) {
        GpuFaults.requireQuiet(quiet);
        context.execute(() -> faults.recoverAfter(quiet));
    }

    /**
     * What every served resource is doing now, sorted by name: devices by health, registration, server state.
     * Cheap and non-blocking; meant for metrics and readiness checks.
     */
    public List<ResourceStatus> status() {
        return plugins.published().values().stream().map(ResourcePlugin::status).toList();
    }

    /**
     * Why the gRPC transport under every plugin server cannot be trusted to serve any more, if it cannot: a JVM
     * error (out of heap or direct memory) on one of its call threads, or its event loop ended. Such a failure
     * stays until the process ends; a liveness probe should fail on it (docs/RELIABILITY.md, "The gRPC servers").
     * Cheap and non-blocking.
     */
    public Optional<String> transportFailure() {
        return kubeletClient.failure();
    }

    /**
     * Whether the last check found the kubelet's registration socket, {@code <device-plugin-dir>/kubelet.sock}: false
     * while the kubelet is down or restarting (the resources stay served and register again once it is back), and
     * until the first check, which runs as the manager starts. Checks run every health poll and at once when the
     * directory changes. Cheap and non-blocking; meant for readiness checks.
     */
    public boolean kubeletSocketPresent() {
        return env.kubelet().present();
    }

    /** The kubelet's registration socket this manager registers through, {@code <device-plugin-dir>/kubelet.sock}. */
    public Path kubeletSocket() {
        return devicePluginDir.resolve(DevicePluginConstants.KUBELET_SOCKET);
    }

    /** The resources served now, sorted. */
    public SortedSet<ResourceName> running() {
        return Collections.unmodifiableSortedSet(new TreeSet<>(plugins.published().keySet()));
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
     * socket and ends every thread this manager started (an injected scheduler is left running, with none of this
     * manager's tasks). Idempotent.
     */
    @Override
    public void close() {
        Optional<List<Runnable>> stops;
        try {
            stops = context.call(() -> {
                if (plugins.closed()) {
                    return Optional.<List<Runnable>>empty();
                }
                faults.close();
                return Optional.of(plugins.stopAll());
            });
        } catch (IllegalStateException e) {
            return; // the scheduler stopped: closed before
        }
        if (stops.isEmpty()) {
            return;
        }
        // Outside the context: each stop may wait for its server to shut down.
        finishOutside(stops.get());
        checks.close();
        if (ownScheduler) {
            scheduler.shutdownNow();
            try {
                if (!scheduler.awaitTermination(20, TimeUnit.SECONDS)) {
                    LOG.warn("Scheduler threads did not end within 20 s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        kubeletClient.close();
        LOG.info("Device plugins stopped");
    }

    /** In the context: every plugin's fault flags again, after the GPU faults changed. */
    private void applyGpuFaults() {
        plugins.values().forEach(p -> p.gpuFaults(faults::faulty));
    }

    /** Package-private for tests: the GPUs with a fault now (call in the context). */
    SortedSet<PciAddress> faultyGpus() {
        return faults.faultyGpus();
    }

    /** Package-private view for tests: the plugin serving {@code name}. */
    ResourcePlugin plugin(ResourceName name) {
        return plugins.published().get(name);
    }

    /** Package-private for tests: runs {@code step} in the manager's context and returns its answer. */
    <T> T inContext(Supplier<T> step) {
        return context.call(step);
    }

    /** Configures a {@link PluginManager}; not thread-safe. */
    public static final class Builder {
        private Path hostRoot = Path.of("/");
        private Optional<HostFiles> files = Optional.empty();
        private Path devicePluginDir = Path.of("/var/lib/kubelet/device-plugins");
        private Duration healthPollInterval = Duration.ofSeconds(5);
        private Duration backoffInitial = Duration.ofSeconds(1);
        private Duration backoffMax = Duration.ofSeconds(30);
        private List<DeviceSource> sources = List.of();
        private PluginObserver observer = PluginObserver.NONE;
        private Optional<ScheduledExecutorService> scheduler = Optional.empty();
        private Optional<ThreadFactory> threads = Optional.empty();
        private InstantSource clock = InstantSource.system();
        private Duration gpuRecovery = Duration.ZERO;
        private GpuFaults.Probe gpuProbe = GpuFaults.Probe.TRUSTING;

        private Builder() {
        }

        /**
         * Recovery from GPU faults ({@link #markGpuUnhealthy}): a GPU marked unhealthy is healthy again after
         * {@code quiet} without another mark, if {@code probe} says it answers (if not, it is asked again after the
         * period, at most a minute later). Zero (the default) never recovers. The period can change later
         * ({@link #recoverGpuFaultsAfter}); it runs on the {@link #scheduler}'s time.
         */
        public Builder gpuFaultRecovery(Duration quiet, GpuFaults.Probe probe) {
            gpuRecovery = GpuFaults.requireQuiet(quiet);
            gpuProbe = Objects.requireNonNull(probe, "probe");
            return this;
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

        /**
         * The scheduler whose threads run the manager's serial context (every state change), its timers (health
         * poll, registration backoff) and its blocking lanes; time, for the manager, is this scheduler's. By default
         * the manager makes two daemon threads ({@code vgpu-dp-scheduler-1..2}) and ends them in {@code close}; an
         * injected one is not shut down, only rid of this manager's tasks. Tests pass a scheduler they drive by hand.
         */
        public Builder scheduler(ScheduledExecutorService value) {
            scheduler = Optional.of(Objects.requireNonNull(value, "scheduler"));
            return this;
        }

        /**
         * Makes every thread the manager starts: the default {@link #scheduler}'s two, the gRPC transport's event loop
         * and call threads, the directory watch. Each new, unstarted thread it returns is named ({@code vgpu-dp-…}) and
         * made a daemon thread by the manager; all have ended when {@code close} returns, give or take a thread's last
         * instructions. An embedder's own factory, or a test's record of the threads it gave. By default plain threads
         * (the transport's event loop: Netty's own).
         */
        public Builder threads(ThreadFactory value) {
            threads = Optional.of(Objects.requireNonNull(value, "threads"));
            return this;
        }

        /** Times the RPCs reported to the {@link #observer}; the system clock by default. */
        public Builder clock(InstantSource value) {
            clock = Objects.requireNonNull(value, "clock");
            return this;
        }

        /** The directory that stands for the host's {@code /} when reading sysfs and devfs. */
        public Builder hostRoot(Path value) {
            hostRoot = Objects.requireNonNull(value, "hostRoot");
            return this;
        }

        /**
         * The reader of the host's files (Allocate's and the health check's re-reads, a faulty GPU's VFs): an
         * embedder's own, such as the one its scanner reads with; by default {@link HostFiles#load()}.
         */
        public Builder hostFiles(HostFiles value) {
            files = Optional.of(Objects.requireNonNull(value, "hostFiles"));
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
