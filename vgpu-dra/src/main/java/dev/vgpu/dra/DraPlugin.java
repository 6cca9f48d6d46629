package dev.vgpu.dra;

import dev.vgpu.attach.Handovers;
import dev.vgpu.core.Plan;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.SnapshotSink;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import io.grpc.BindableService;
import io.grpc.Server;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DRA kubelet plugin of one node (docs/DRA.md): serves {@code pluginregistration.Registration} on
 * {@code <kubelet-root>/plugins_registry/<driver>-reg.sock} and the {@code v1} and {@code v1beta1}
 * {@code DRAPlugin} services on {@code <kubelet-root>/plugins/<driver>/dra.sock}. Prepare reads each claim through
 * the {@link ClaimReader}, checks its devices against the current snapshot with {@link Handovers}, and writes one
 * CDI spec per claim (kind {@code <driver>/claim}) and per request the KEP-5304 metadata file with its CDI mount, so
 * that KubeVirt's virt-launcher finds the device; a checkpoint in the state directory lets a new instance answer a
 * repeated Prepare and Unprepare what an earlier one prepared.
 * <pre>{@code
 * Snapshot first = scanner.scan(Snapshot.empty());
 * try (DraPlugin plugin = DraPlugin.builder(Handovers.forHost(host, sources), claimReader)
 *         .driver(DriverName.DEFAULT).pool(nodeName).snapshot(first)
 *         .kubeletRoot(Path.of("/var/lib/kubelet")).cdiDir(Path.of("/var/run/cdi"))
 *         .stateDir(Path.of("/var/lib/vgpu")).start();
 *         RescanLoop loop = new RescanLoop(scanner, plugin, Duration.ofMinutes(1), first)) {
 *     ...   // each changed snapshot reaches the plugin through apply(snapshot, plan)
 * }
 * }</pre>
 *
 * <p>Threads: gRPC's call threads ({@code vgpu-dra-rpc-N}) only post each DRA call to the one claims thread
 * ({@code vgpu-dra-claims}), which owns every prepared claim, the checkpoint and the files under the CDI and
 * metadata directories; the snapshot is written by the caller of {@link #apply} and read by the claims thread
 * through a {@code volatile}; the registration verdict is written by a call thread, read by anyone. With the health
 * stream on, the health thread ({@code vgpu-dra-health-stream}) owns the open streams and the unhealthy ids.
 */
public final class DraPlugin implements SnapshotSink, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DraPlugin.class);

    private final PluginPaths paths;
    private final UnixDomainTransport transport;
    private final ExecutorService claimsThread;
    private final Server draServer;
    private final Server registrationServer;
    /** The health streams, or null when the plugin does not serve DRAResourceHealth. */
    private final HealthStreams health;
    private volatile Snapshot snapshot;
    private volatile KubeletRegistration registration = new KubeletRegistration.Waiting();

    private DraPlugin(Builder b) throws IOException {
        this.paths = new PluginPaths(b.driver, b.kubeletRoot, b.cdiDir, b.stateDir);
        this.snapshot = b.snapshot;
        checkLength(paths.registrationSocket());
        checkLength(paths.draSocket());
        Files.createDirectories(paths.registrationSocket().getParent());
        Files.createDirectories(paths.pluginDir());
        Files.createDirectories(paths.cdiDir());
        Files.createDirectories(paths.stateDir());
        ClaimPreparer preparer = new ClaimPreparer(paths, b.pool, b.handovers, b.reader, () -> snapshot);
        this.claimsThread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "vgpu-dra-claims");
            t.setDaemon(true);
            return t;
        });
        this.transport = UnixDomainTransport.create("vgpu-dra", 1, 2);
        this.health = b.healthStream ? new HealthStreams(b.pool, () -> snapshot, Clock.systemUTC(), b.healthRefresh,
                b.healthThreads)
                : null;
        List<String> versions = new ArrayList<>(RegistrationService.SUPPORTED_VERSIONS);
        Server dra = null;
        try {
            ClaimCalls calls = new ClaimCalls(claimsThread, preparer, b.observer);
            List<BindableService> services = new ArrayList<>(List.of(new DraServiceV1(calls),
                    new DraServiceV1beta1(calls)));
            if (health != null) {
                services.add(new HealthServiceV1(health));
                services.add(new HealthServiceV1alpha1(health));
                versions.addAll(RegistrationService.HEALTH_VERSIONS);
            }
            dra = transport.serve(paths.draSocket(), services);
            // Registration last: once the kubelet can find the plugin, its DRA socket already answers.
            this.registrationServer = transport.serve(paths.registrationSocket(),
                    List.of(new RegistrationService(paths, versions, verdict -> registration = verdict)));
        } catch (IOException | RuntimeException e) {
            if (dra != null) {
                dra.shutdownNow();
            }
            if (health != null) {
                health.close();
            }
            claimsThread.shutdownNow();
            transport.close();
            throw e;
        }
        this.draServer = dra;
        LOG.info("DRA driver {} for pool {}: registration {}, DRA service {} ({}), CDI specs in {}, checkpoint {}",
                paths.driver(), b.pool, paths.registrationSocket(), paths.draSocket(),
                String.join(", ", versions), paths.cdiDir(), paths.checkpoint());
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

    /** Takes {@code next} as the devices Prepare may hand over; the plan is not needed. Any thread. */
    @Override
    public void apply(Snapshot next, Plan plan) {
        snapshot = Objects.requireNonNull(next, "next");
        if (health != null) {
            health.snapshotChanged();
        }
    }

    /**
     * Reports exactly the devices with these ids as unhealthy on the {@code DRAResourceHealth} stream from now on,
     * every other device of the snapshot as healthy: the ids {@link SlicePublisher#health} takes. Until the first call
     * the stream reports every device as unknown. Does nothing unless the plugin serves the stream
     * ({@link Builder#healthStream}). Any thread; returns at once.
     */
    public void health(Set<String> unhealthyIds) {
        Objects.requireNonNull(unhealthyIds, "unhealthyIds");
        Map<String, String> reasons = new HashMap<>();
        unhealthyIds.forEach(id -> reasons.put(id, ""));
        health(reasons);
    }

    /**
     * As {@link #health(Set)}, each unhealthy device with the reason the stream's message carries (at most 1,024
     * characters; an empty reason gets a generic message), e.g. {@link DraHealth}'s verdicts.
     */
    public void health(Map<String, String> reasonsById) {
        Objects.requireNonNull(reasonsById, "reasonsById");
        if (health != null) {
            health.health(reasonsById);
        }
    }

    /** What the kubelet last said about the registration. */
    public KubeletRegistration registration() {
        return registration;
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
     * Stops serving and removes both sockets; prepared claims stay prepared (their files and the checkpoint stay,
     * for the next instance). Waits for a call in progress a few seconds at most.
     */
    @Override
    public void close() {
        // No new calls first, then the open health streams end (they would keep the DRA server from terminating); a
        // stream the kubelet reopens in between is refused by the server, not left open.
        registrationServer.shutdown();
        draServer.shutdown();
        if (health != null) {
            health.close();
        }
        claimsThread.shutdown();
        try {
            registrationServer.awaitTermination(5, TimeUnit.SECONDS);
            draServer.awaitTermination(5, TimeUnit.SECONDS);
            claimsThread.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        registrationServer.shutdownNow();
        draServer.shutdownNow();
        claimsThread.shutdownNow();
        transport.close();
        for (Path socket : List.of(paths.registrationSocket(), paths.draSocket())) {
            try {
                Files.deleteIfExists(socket);
            } catch (IOException e) {
                LOG.warn("Cannot remove {}: {}", socket, e.toString());
            }
        }
    }

    private static void checkLength(Path socket) throws IOException {
        int bytes = UnixDomainTransport.pathBytes(socket);
        if (bytes > UnixDomainTransport.MAX_PATH_BYTES) {
            throw new IOException("the socket path " + socket + " has " + bytes + " bytes, more than the "
                    + UnixDomainTransport.MAX_PATH_BYTES + " a unix socket path may have: use a shorter kubelet root"
                    + " or driver name");
        }
    }

    /** The plugin's settings; {@link #start()} validates them. Not thread-safe. */
    public static final class Builder {
        private final Handovers handovers;
        private final ClaimReader reader;
        private DriverName driver = DriverName.DEFAULT;
        private String pool;
        private Path kubeletRoot = Path.of("/var/lib/kubelet");
        private Path cdiDir = Path.of("/var/run/cdi");
        private Path stateDir;
        private Snapshot snapshot = Snapshot.empty();
        private boolean healthStream;
        private Duration healthRefresh = HealthStreams.REFRESH;
        private java.util.concurrent.ThreadFactory healthThreads = r -> {
            Thread t = new Thread(r, HealthStreams.THREAD_NAME);
            t.setDaemon(true);
            return t;
        };
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

        /** The snapshot Prepare uses until the first {@link DraPlugin#apply} (empty unless set). */
        public Builder snapshot(Snapshot value) {
            snapshot = Objects.requireNonNull(value, "snapshot");
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
         * health of every device at once, on each change ({@link DraPlugin#health}, a new snapshot) and every 10 s;
         * every device is unknown until the first {@link DraPlugin#health}, so a plugin with this on should call it.
         */
        public Builder healthStream(boolean value) {
            healthStream = value;
            return this;
        }

        /** How often an unchanged health list is sent again (tests). */
        Builder healthRefresh(Duration value) {
            healthRefresh = Objects.requireNonNull(value, "healthRefresh");
            return this;
        }

        /** What makes the health stream's one thread (tests: a factory that remembers its threads). */
        Builder healthThreads(java.util.concurrent.ThreadFactory value) {
            healthThreads = Objects.requireNonNull(value, "healthThreads");
            return this;
        }

        /**
         * Creates the directories, restores the checkpoint and serves both sockets.
         *
         * @throws IllegalStateException when the pool or the state directory is missing
         * @throws IOException           when a directory cannot be made, a socket path is too long or cannot be
         *                               bound
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
