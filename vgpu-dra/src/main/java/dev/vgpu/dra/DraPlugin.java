package dev.vgpu.dra;

import dev.vgpu.attach.GpuFaults;
import dev.vgpu.attach.Handovers;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Plan;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.SnapshotSink;
import dev.vgpu.core.internal.Guarded;
import dev.vgpu.core.internal.SerialContext;
import dev.vgpu.core.internal.Threads;
import dev.vgpu.kubelet.api.transport.DirectoryWatch;
import dev.vgpu.kubelet.api.transport.ServerLimits;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import io.grpc.BindableService;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DRA kubelet plugin of one node (docs/DRA.md): serves {@code pluginregistration.Registration} on
 * {@code <kubelet-root>/plugins_registry/<driver>-reg.sock} and the {@code v1} and {@code v1beta1}
 * {@code DRAPlugin} services (and, when asked, {@code DRAResourceHealth}) on
 * {@code <kubelet-root>/plugins/<driver>/dra.sock}. Prepare gets each claim read by the {@link ClaimReader}, checks
 * its devices against the current snapshot with {@link Handovers}, and writes one CDI spec per claim (kind
 * {@code <driver>/claim}) and per request the KEP-5304 metadata file with its CDI mount, so that KubeVirt's
 * virt-launcher finds the device; a checkpoint in the state directory lets a new instance answer a repeated Prepare
 * and Unprepare what an earlier one prepared. Devices are checked for health as in device-plugin mode; the pool and
 * its health go to a {@link Builder#devicePool listener} (the ResourceSlice publisher) as one plain value.
 * <pre>{@code
 * Snapshot first = scanner.scan(Snapshot.empty());
 * try (DraPlugin plugin = DraPlugin.builder(Handovers.forHost(host, sources), claimReader)
 *         .driver(DriverName.DEFAULT).pool(nodeName).snapshot(first)
 *         .kubeletRoot(Path.of("/var/lib/kubelet")).cdiDir(Path.of("/var/run/cdi"))
 *         .stateDir(Path.of("/var/lib/vgpu")).devicePool(slices::publish).start();
 *         RescanLoop loop = new RescanLoop(scanner, plugin, Duration.ofMinutes(1), first)) {
 *     ...   // each changed snapshot reaches the plugin through apply(snapshot, plan)
 * }
 * }</pre>
 *
 * <p>Threads and state (docs/ARCHITECTURE.md, "Threads and mutable state"): one serial context (over two scheduler
 * threads, {@code vgpu-dra-scheduler-1..2}) owns every mutable thing: the snapshot, the health verdicts and GPU
 * faults, the prepared claims, the health streams, the sockets and the registration. Every change is a task posted
 * to it. Blocking work runs outside and posts back: Prepare's and Unprepare's files on the claim-files lane, health
 * reads and socket checks on the check lane, a faulty GPU's VF listing on the fault lane (all three on the scheduler's
 * threads, one task at a time each), claim reads on the read thread ({@code vgpu-dra-reads}). The transport
 * ({@code vgpu-dra-io-1}, {@code vgpu-dra-rpc-1..2}) only admits calls and posts them; {@code vgpu-dra-watch} watches
 * the two socket directories and posts. Every thread comes from the {@link Builder#threads factory} given. Other
 * threads read only {@link #status()}, published by the context.
 */
public final class DraPlugin implements SnapshotSink, AutoCloseable {

    /** How often the sockets and the devices' health are checked besides the directory watch. */
    static final Duration CHECK_EVERY = Duration.ofSeconds(5);
    /** How often an unchanged health list is sent again: well inside the kubelet's 30 s. */
    static final Duration HEALTH_REFRESH = Duration.ofSeconds(10);

    private static final Logger LOG = LoggerFactory.getLogger(DraPlugin.class);

    private final PluginPaths paths;
    private final String pool;
    private final PluginLock lock;
    private final ScheduledThreadPoolExecutor scheduler;
    private final ScheduledThreadPoolExecutor reads;
    private final UnixDomainTransport transport;
    private final SerialContext owner;
    private final SerialContext checkLane;
    private final AtomicReference<String> fatal = new AtomicReference<>();
    private final Consumer<DevicePool> poolListener;
    private final DraObserver observer;
    private final PreparedClaims claims;
    private final DeviceChecks checks;
    /** Null when the plugin does not serve DRAResourceHealth. */
    private final HealthStreams streams;
    private final PluginSockets sockets;
    private final DirectoryWatch watch;

    // Owner context only.
    private Snapshot snapshot;
    private KubeletRegistration registration = new KubeletRegistration.Waiting();
    private boolean socketsChecking;
    private boolean closed;
    /** The pool last told to the listener. */
    private DevicePool told;
    /** What the context publishes for every thread. */
    private volatile DraStatus status;

    private DraPlugin(Builder b) throws IOException {
        this.paths = new PluginPaths(b.driver, b.kubeletRoot, b.cdiDir, b.stateDir, b.podUid);
        this.pool = b.pool;
        this.poolListener = b.devicePool;
        this.observer = b.observer;
        for (Path socket : paths.sockets()) {
            checkLength(socket);
        }
        Files.createDirectories(paths.registryDir());
        Files.createDirectories(paths.pluginDir());
        Files.createDirectories(paths.cdiDir());
        Files.createDirectories(paths.stateDir());
        this.lock = PluginLock.acquire(paths.lock(), "pid " + ProcessHandle.current().pid() + " (state directory "
                + paths.stateDir() + ")");
        List<AutoCloseable> opened = new ArrayList<>(List.of(lock));
        try {
            this.scheduler = new ScheduledThreadPoolExecutor(2, named(b.threads, "vgpu-dra-scheduler-", true));
            scheduler.setRemoveOnCancelPolicy(true);
            // Timers still pending at close (a GPU's recovery an hour away) are dropped, not waited for.
            scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
            scheduler.prestartAllCoreThreads();
            opened.add(scheduler::shutdownNow);
            this.reads = Threads.owner(named(b.threads, "vgpu-dra-reads", false));
            opened.add(reads::shutdownNow);
            this.transport = UnixDomainTransport.create("vgpu-dra", 1, 2, ServerLimits.DEFAULT, b.threads);
            opened.add(transport);
            Consumer<VirtualMachineError> onFatal = e -> fatal.compareAndSet(null, "a JVM error on a DRA plugin"
                    + " thread: " + e);
            this.owner = new SerialContext("DRA plugin state", scheduler, onFatal);
            this.checkLane = new SerialContext("DRA checks", scheduler, onFatal);
            this.snapshot = b.snapshot;
            Map<String, PreparedClaim> restored = Checkpoint.load(paths.checkpoint(), paths::mayHold);
            if (!restored.isEmpty()) {
                LOG.info("Restored {} prepared claims from {}", restored.size(), paths.checkpoint());
            }
            // The claims and the calls' front know each other: the front hands calls to the claims, which hand a
            // Prepare back to be read once more when an Unprepare removed a claim it did not read.
            AtomicReference<ClaimCalls> front = new AtomicReference<>();
            this.claims = new PreparedClaims(owner, new SerialContext("DRA claim files", scheduler, onFatal),
                    new ClaimPreparer(paths, pool, b.handovers, b.limits, b.bridged), restored,
                    () -> snapshot == null ? Snapshot.empty() : snapshot, this::publish,
                    (call, unread) -> front.get().reread(call, unread));
            this.checks = new DeviceChecks(owner, checkLane, new SerialContext("GPU fault listing", scheduler, onFatal),
                    b.handovers, b.hostRoot, b.gpuProbe, b.gpuRecovery, () -> snapshot, this::healthChanged);
            this.streams = b.healthStream ? new HealthStreams(owner, b.limits, this::reports, Clock.systemUTC(),
                    this::publish)
                    : null;
            ClaimCalls calls = new ClaimCalls(b.limits, b.reader, task -> reads.execute(Guarded.task("claim reads",
                    task, onFatal)), owner, claims, b.observer);
            front.set(calls);
            List<BindableService> services = new ArrayList<>(List.of(new DraServiceV1(calls),
                    new DraServiceV1beta1(calls)));
            List<String> versions = new ArrayList<>(RegistrationService.SUPPORTED_VERSIONS);
            if (streams != null) {
                services.add(new HealthServiceV1(streams));
                services.add(new HealthServiceV1alpha1(streams));
                versions.addAll(RegistrationService.HEALTH_VERSIONS);
            }
            this.sockets = new PluginSockets(paths, transport, services, new RegistrationService(paths, versions,
                    // Taken before the kubelet gets its answer: once NotifyRegistrationStatus returned, status()
                    // says so (a short task of the context; the call thread waits for it).
                    verdict -> owner.call(() -> {
                        registered(verdict);
                        return null;
                    })), () -> registration =
                    new KubeletRegistration.Waiting());
            owner.call(() -> {
                try {
                    sockets.start();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                observer.preparedClaims(claims.count());
                publish();
                checks.check();
                return null;
            });
            this.watch = new DirectoryWatch(List.of(paths.registryDir(), paths.pluginDir()),
                    dir -> owner.execute(this::checkSockets), b.threads, "vgpu-dra-watch",
                    e -> Guarded.report("DRA socket directory watch", e, onFatal)).start();
            owner.every(() -> {
                checkSockets();
                checks.check();
            }, b.checkEvery.toNanos());
            if (streams != null) {
                owner.every(streams::refresh, b.healthRefresh.toNanos());
            }
            LOG.info("DRA driver {} for pool {}: registration {}, DRA service {} ({}), CDI specs in {}, checkpoint {};"
                    + " at most {} claims a call, {} calls waiting, {} results a claim, {} health streams ({} a"
                    + " connection)", paths.driver(), pool, paths.registrationSocket(), paths.draSocket(),
                    String.join(", ", versions), paths.cdiDir(), paths.checkpoint(), b.limits.claimsPerCall(),
                    b.limits.pendingCalls(), b.limits.resultsPerClaim(), b.limits.healthStreams(),
                    b.limits.healthStreamsPerConnection());
        } catch (java.io.UncheckedIOException e) {
            closeAll(opened);
            throw e.getCause();
        } catch (IOException | RuntimeException | Error e) {
            closeAll(opened);
            throw e;
        }
    }

    /**
     * Starts a plugin.
     *
     * @param handovers the checks and device nodes of this host's devices, given the sources of its snapshots
     * @param reader    where claims' allocations are read
     */
    public static Builder builder(Handovers handovers, ClaimReader reader) {
        return new Builder(handovers, reader);
    }

    /**
     * Takes {@code next} as the devices Prepare may hand over and the health checks read; the plan is not needed.
     * Returns once the plugin's context has taken it (a Prepare after this sees it). Any thread.
     */
    @Override
    public void apply(Snapshot next, Plan plan) {
        Objects.requireNonNull(next, "next");
        owner.call(() -> {
            snapshot = next;
            publish();
            if (streams != null) {
                streams.devicesChanged();
            }
            checks.check();
            return null;
        });
    }

    /**
     * An XID fault of {@code gpu} (of one GPU instance only, when given), with the device plugin's policy: every
     * device on it unhealthy until it recovers (docs/ARCHITECTURE.md, "Where an XID makes a device unhealthy"). Any
     * thread; returns at once.
     */
    public void markGpuUnhealthy(PciAddress gpu, OptionalInt gpuInstance, String reason) {
        checks.markGpuUnhealthy(Objects.requireNonNull(gpu, "gpu"), Objects.requireNonNull(gpuInstance),
                Objects.requireNonNull(reason, "reason"));
    }

    /** A new XID recovery period from now (a configuration reload); zero never recovers. Any thread. */
    public void recoverGpuFaultsAfter(Duration quiet) {
        GpuFaults.requireQuiet(quiet);
        owner.execute(() -> checks.recoverAfter(quiet));
    }

    /**
     * Waits until every GPU fault marked before has reached the verdicts, then checks the devices and waits until
     * that round is back and its verdicts told (tests).
     */
    void awaitChecks() throws InterruptedException {
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        checks.afterMarks(() -> checks.check(done::countDown));
        if (!done.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no health round came back within 60 s");
        }
        owner.call(() -> null); // what the round posted has run
    }

    /** What the plugin is doing now. Any thread, never waits. */
    public DraStatus status() {
        DraStatus now = status;
        Optional<String> failure = Optional.ofNullable(fatal.get()).or(transport::failure);
        return failure.isEmpty() ? now : new DraStatus(now.registration(), now.missingSockets(), now.unhealthyIds(),
                now.preparedClaims(), now.healthStreams(), failure);
    }

    /** What the kubelet last said about the registration. */
    public KubeletRegistration registration() {
        return status.registration();
    }

    /** The registration socket the kubelet's plugin watcher dials. */
    public Path registrationSocket() {
        return paths.registrationSocket();
    }

    /** The DRA service socket, the endpoint GetInfo answers. */
    public Path draSocket() {
        return paths.draSocket();
    }

    /**
     * Stops serving and removes both sockets if they are still the ones this plugin bound; prepared claims stay
     * prepared (their files and the checkpoint stay, for the next instance). Waits a few seconds at most for calls in
     * progress; ends every thread the plugin started. Idempotent.
     */
    @Override
    public void close() {
        Runnable stop;
        try {
            stop = owner.call(() -> {
                if (closed) {
                    return null;
                }
                closed = true;
                if (streams != null) {
                    streams.close();
                }
                checks.close();
                return sockets.stop();
            });
        } catch (IllegalStateException e) {
            return; // the scheduler stopped: closed before
        }
        if (stop == null) {
            return;
        }
        watch.close();
        stop.run();
        reads.shutdownNow();
        // The claim files lane finishes the call it runs (local files, quick); nothing waits behind it any more.
        Threads.stop(scheduler, Duration.ofSeconds(10));
        try {
            reads.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        transport.close();
        lock.close();
        LOG.info("DRA driver {} stopped; prepared claims and their files stay for the next start", paths.driver());
    }

    /** In the context: a check of both sockets soon, one at a time. */
    private void checkSockets() {
        if (socketsChecking || closed) {
            return;
        }
        socketsChecking = true;
        int served = sockets.served();
        checkLane.execute(() -> {
            PluginSockets.Reading reading = null;
            try {
                if (watch != null) {
                    watch.ensureWatching(); // a directory made again is watched again
                }
                reading = PluginSockets.read(served, paths.sockets());
            } finally {
                PluginSockets.Reading read = reading;
                owner.execute(() -> {
                    socketsChecking = false;
                    if (read != null && !closed) {
                        sockets.checked(read).forEach(checkLane::execute);
                        publish();
                    }
                });
            }
        });
    }

    /** In the context: the kubelet's verdict on the registration. */
    private void registered(KubeletRegistration verdict) {
        registration = verdict;
        publish();
    }

    /** In the context: the verdicts changed; the streams and the pool's listener are told. */
    private void healthChanged() {
        if (streams != null) {
            streams.changed();
        }
        publish();
    }

    /** In the context: publishes the status for every thread and the pool to its listener. */
    private void publish() {
        Optional<Map<String, String>> verdicts = checks.verdicts();
        List<String> unhealthy = verdicts.map(v -> v.keySet().stream().sorted().toList()).orElse(List.of());
        status = new DraStatus(registration, sockets.missing(), unhealthy, claims.count(),
                streams == null ? 0 : streams.count(), Optional.empty());
        DevicePool now = snapshot == null ? null : new DevicePool(snapshot, verdicts);
        if (now != null && !now.equals(told)) {
            told = now;
            try {
                poolListener.accept(now);
            } catch (RuntimeException e) {
                LOG.warn("The device pool's listener failed: {}", e.toString(), e);
            }
        }
    }

    /** In the context: every device of the snapshot as the health stream reports it, sorted by name. */
    private List<HealthReport> reports(long nowSeconds) {
        Optional<Map<String, String>> verdicts = checks.verdicts();
        List<HealthReport> reports = new ArrayList<>();
        if (snapshot == null) {
            return reports;
        }
        for (Device d : snapshot.resources().values().stream().flatMap(r -> r.devices().stream()).toList()) {
            HealthReport.Status state;
            String message;
            if (verdicts.isEmpty()) {
                state = HealthReport.Status.UNKNOWN;
                message = HealthStreams.UNKNOWN_MESSAGE;
            } else if (verdicts.get().containsKey(d.id())) {
                state = HealthReport.Status.UNHEALTHY;
                message = HealthStreams.message(verdicts.get().get(d.id()));
            } else {
                state = HealthReport.Status.HEALTHY;
                message = "";
            }
            reports.add(new HealthReport(pool, DeviceNames.of(d), state, nowSeconds, message));
        }
        reports.sort(Comparator.comparing(HealthReport::device));
        return reports;
    }

    private static void checkLength(Path socket) throws IOException {
        int bytes = UnixDomainTransport.pathBytes(socket);
        if (bytes > UnixDomainTransport.MAX_PATH_BYTES) {
            throw new IOException("the socket path " + socket + " has " + bytes + " bytes, more than the "
                    + UnixDomainTransport.MAX_PATH_BYTES + " a unix socket path may have: use a shorter kubelet root"
                    + " or driver name");
        }
    }

    /** Daemon threads of {@code base} named {@code name} (with a number when {@code numbered}). */
    private static ThreadFactory named(ThreadFactory base, String name, boolean numbered) {
        AtomicInteger made = new AtomicInteger();
        return task -> {
            Thread t = Objects.requireNonNull(base.newThread(task), "the thread factory made no thread");
            t.setName(numbered ? name + made.incrementAndGet() : name);
            t.setDaemon(true);
            return t;
        };
    }

    private static void closeAll(List<AutoCloseable> opened) {
        for (int i = opened.size() - 1; i >= 0; i--) {
            try {
                opened.get(i).close();
            } catch (Exception e) {
                LOG.debug("Closing after a failed start: {}", e.toString());
            }
        }
    }

    /**
     * Checks a pod UID as {@link Builder#podUid} does (letters, digits and {@code -}, at most 64), for a caller that
     * refuses a bad {@code POD_UID} before it starts anything.
     *
     * @return the UID
     * @throws IllegalArgumentException naming {@code POD_UID} and the value
     */
    public static String requirePodUid(String uid) {
        return PluginPaths.requirePodUid(uid);
    }

    /** The plugin's settings; {@link #start()} validates them. Not thread-safe. */
    public static final class Builder {
        private final Handovers handovers;
        private final ClaimReader reader;
        private DriverName driver = DriverName.DEFAULT;
        private String pool;
        private Path kubeletRoot = Path.of("/var/lib/kubelet");
        private java.util.Optional<String> podUid = java.util.Optional.empty();
        private java.util.function.Predicate<dev.vgpu.core.ResourceName> bridged = r -> true;
        private Path cdiDir = Path.of("/var/run/cdi");
        private Path stateDir;
        private Path hostRoot = Path.of("/");
        /** Null until given: no health verdict before a snapshot (a restarted daemon keeps its slices' taints). */
        private Snapshot snapshot;
        private boolean healthStream;
        private DraLimits limits = DraLimits.DEFAULT;
        private Duration checkEvery = CHECK_EVERY;
        private Duration healthRefresh = HEALTH_REFRESH;
        private Duration gpuRecovery = Duration.ZERO;
        private GpuFaults.Probe gpuProbe = GpuFaults.Probe.TRUSTING;
        private ThreadFactory threads = Thread::new;
        private Consumer<DevicePool> devicePool = p -> { };
        private DraObserver observer = DraObserver.NONE;

        private Builder(Handovers handovers, ClaimReader reader) {
            this.handovers = Objects.requireNonNull(handovers, "handovers");
            this.reader = Objects.requireNonNull(reader, "reader");
        }

        /** The driver name ({@link DriverName#DEFAULT} unless set). */
        public Builder driver(DriverName value) {
            driver = Objects.requireNonNull(value, "driver");
            return this;
        }

        /** The pool the node's devices are published in: the node name. Required. */
        public Builder pool(String value) {
            pool = value;
            return this;
        }

        /** The kubelet's root directory ({@code /var/lib/kubelet} unless set). */
        public Builder kubeletRoot(Path value) {
            kubeletRoot = Objects.requireNonNull(value, "kubeletRoot");
            return this;
        }

        /**
         * The UID of the pod this plugin runs in ({@code POD_UID} from the downward API): the sockets become
         * {@code plugins_registry/<driver>-<podUid>-reg.sock} and {@code plugins/<driver>/dra-<podUid>.sock}, so
         * that a new pod's sockets never take an old pod's name (where a path would pass 107 bytes, 8 hex digits
         * of the UID's SHA-256 stand for it). Null or empty: the fixed names {@code <driver>-reg.sock} and
         * {@code dra.sock}. Either way a plugin deletes only the socket files it bound, and only while they are
         * still the ones it bound.
         *
         * @throws IllegalArgumentException when the UID is not letters, digits and {@code -} (at most 64)
         */
        public Builder podUid(String value) {
            podUid = value == null || value.isBlank() ? java.util.Optional.empty()
                    : java.util.Optional.of(PluginPaths.requirePodUid(value.strip()));
            return this;
        }

        /**
         * Which resources an extended-resource claim (docs/DRA.md, "The extended-resource bridge") gets the device
         * plugin's environment for; every one unless set. Asked on the claim-files lane at each such Prepare (it may
         * read a file, briefly): the daemon leaves out a resource that a device-plugin socket serves on the node,
         * and says so once.
         */
        public Builder bridged(java.util.function.Predicate<dev.vgpu.core.ResourceName> value) {
            bridged = Objects.requireNonNull(value, "bridged");
            return this;
        }

        /** Where CDI specs are written ({@code /var/run/cdi} unless set). */
        public Builder cdiDir(Path value) {
            cdiDir = Objects.requireNonNull(value, "cdiDir");
            return this;
        }

        /** Where the prepared-claims checkpoint is kept; required, and not under the kubelet root. */
        public Builder stateDir(Path value) {
            stateDir = Objects.requireNonNull(value, "stateDir");
            return this;
        }

        /** The host's {@code /}, where a faulty GPU's VFs are listed ({@code /} unless set). */
        public Builder hostRoot(Path value) {
            hostRoot = Objects.requireNonNull(value, "hostRoot");
            return this;
        }

        /**
         * The snapshot Prepare uses and the health checks read until the first {@link DraPlugin#apply}; unless set,
         * Prepare knows no device and no health verdict is made before that apply.
         */
        public Builder snapshot(Snapshot value) {
            snapshot = Objects.requireNonNull(value, "snapshot");
            return this;
        }

        /** The bounds on what clients send ({@link DraLimits#DEFAULT} unless set). */
        public Builder limits(DraLimits value) {
            limits = Objects.requireNonNull(value, "limits");
            return this;
        }

        /**
         * Recovery from GPU faults ({@link DraPlugin#markGpuUnhealthy}): a GPU is healthy again after {@code quiet}
         * without another fault, if {@code probe} says it answers. Zero (the default) never recovers.
         */
        public Builder gpuFaultRecovery(Duration quiet, GpuFaults.Probe probe) {
            gpuRecovery = GpuFaults.requireQuiet(quiet);
            gpuProbe = Objects.requireNonNull(probe, "probe");
            return this;
        }

        /**
         * Makes every thread the plugin starts: its two scheduler threads, the read thread, the transport's event
         * loop and call threads, the directory watch. Each new, unstarted thread it returns is named
         * ({@code vgpu-dra-…}) and made a daemon thread by the plugin; all have ended when {@code close} returns. An
         * embedder's own factory, or a test's record of the threads it gave. Plain threads unless set.
         */
        public Builder threads(ThreadFactory value) {
            threads = Objects.requireNonNull(value, "threads");
            return this;
        }

        /**
         * Told the pool (the snapshot and the devices' health) whenever either changes, as one plain value: the
         * ResourceSlice publisher's {@code publish}. Called in the plugin's context: it must return at once.
         */
        public Builder devicePool(Consumer<DevicePool> value) {
            devicePool = Objects.requireNonNull(value, "devicePool");
            return this;
        }

        /** Hears every answered claim and the count of prepared claims (metrics); {@link DraObserver#NONE} unless set. */
        public Builder observer(DraObserver value) {
            observer = Objects.requireNonNull(value, "observer");
            return this;
        }

        /**
         * Whether the plugin also serves {@code v1} and {@code v1alpha1} {@code DRAResourceHealth} on its DRA socket
         * and lists them in GetInfo after the {@code DRAPlugin} versions (off unless set): every open stream gets the
         * health of every device at once, on each change and every 10 s; every device is unknown until the plugin's
         * first health check.
         */
        public Builder healthStream(boolean value) {
            healthStream = value;
            return this;
        }

        /** How often the sockets and the devices' health are checked besides the directory watch (tests). */
        Builder checkEvery(Duration value) {
            checkEvery = Objects.requireNonNull(value, "checkEvery");
            return this;
        }

        /** How often an unchanged health list is sent again (tests). */
        Builder healthRefresh(Duration value) {
            healthRefresh = Objects.requireNonNull(value, "healthRefresh");
            return this;
        }

        /**
         * Takes the driver's lock, creates the directories, restores the checkpoint and serves both sockets.
         *
         * @throws IllegalStateException when the pool or the state directory is missing
         * @throws IOException           when another process serves the driver on this kubelet root (naming it), a
         *                               directory cannot be made, a socket path is too long or cannot be bound
         */
        public DraPlugin start() throws IOException {
            if (pool == null || pool.isEmpty()) {
                throw new IllegalStateException("a DRA plugin needs its pool name (the node name): call pool(name)");
            }
            if (stateDir == null) {
                throw new IllegalStateException("a DRA plugin needs a state directory for its checkpoint: call"
                        + " stateDir(path)");
            }
            return new DraPlugin(this);
        }
    }
}
