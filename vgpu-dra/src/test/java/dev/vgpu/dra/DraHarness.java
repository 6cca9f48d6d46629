package dev.vgpu.dra;

import dev.vgpu.attach.Handovers;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Host;
import dev.vgpu.dra.grpc.v1.Claim;
import dev.vgpu.dra.grpc.v1.NodePrepareResourceResponse;
import dev.vgpu.sysfs.MdevSource;
import dev.vgpu.sysfs.PassthroughSource;
import dev.vgpu.sysfs.VendorVfioSource;
import dev.vgpu.testing.SysfsTree;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One node for DRA tests: a real-layout host tree with a passthrough H200 (group 41, with its audio function), an
 * L40S with two VF vGPUs (groups 100, 101) and a T4 carrying one mdev (group 7); a snapshot the built-in sysfs
 * sources scanned from it; a claim store standing in for the API server; a plugin and a test kubelet on real unix
 * sockets. Paths: {@code kubelet/}, {@code cdi/}, {@code state/}, {@code host/} under the test's directory.
 */
final class DraHarness implements AutoCloseable {

    static final String DRIVER = "gpu.vgpu.dev";
    static final String POOL = "node-a";
    static final String UUID = "aa618089-8b16-4d01-a136-25a0f3c73123";
    static final String GPU = "pci-0000-41-00-0";
    static final String VF = "pci-0000-1b-00-4";
    static final String VF2 = "pci-0000-1b-00-5";
    static final String MDEV = "mdev-" + UUID;
    static final Map<Long, String> L40S = Map.of(1152L, "NVIDIA L40S-1Q", 1155L, "NVIDIA L40S-4Q");

    final Path dir;
    final SysfsTree host;
    final List<DeviceSource> sources = List.of(new PassthroughSource(), new MdevSource(), new VendorVfioSource());
    /** Claims by UID as the API server holds them. */
    final Map<String, AllocatedClaim> apiServer = new ConcurrentHashMap<>();
    final AtomicInteger reads = new AtomicInteger();
    /** The names of the claims read, in order. */
    final List<String> readNames = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Runs in every read before it answers (a test's hook: a read that hangs). */
    volatile java.util.function.Consumer<ClaimRef> onRead = ref -> { };
    final TestKubelet kubelet = new TestKubelet();
    /** What every plugin instance of this harness told its observer, across restarts. */
    final Heard heard = new Heard();
    /** Every pool a plugin of this harness told its listener, in order (what a slice publisher would get). */
    final List<DevicePool> pools = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Every thread the harness's plugins made. */
    final dev.vgpu.testsupport.RecordingThreads threads = new dev.vgpu.testsupport.RecordingThreads("dra-test");
    Snapshot snapshot;
    DraPlugin plugin;

    DraHarness(Path dir) {
        this.dir = dir;
        host = SysfsTree.at(dir.resolve("host"));
        host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).create();
        host.function("0000:41:00.1", 0x10de, 0x22e8).driver("vfio-pci").iommuGroup(41).create();
        host.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(2, 100).catalog(L40S).create();
        host.configureVf("0000:1b:00.4", 1152).configureVf("0000:1b:00.5", 1152);
        host.nvidiaGpu("0000:06:00.0", 0x1eb8).create();
        host.mdev(UUID, "0000:06:00.0", "nvidia-222", "GRID T4-1Q", 7);
        host.addGroupNode(41).addGroupNode(100).addGroupNode(101).addGroupNode(7);
        snapshot = scan();
        start();
    }

    /** What the built-in sources find on the tree now. */
    Snapshot scan() {
        Host scanHost = host.host().forScan();
        Snapshot.Builder next = Snapshot.builder();
        for (DeviceSource source : sources) {
            try {
                next.add(source.name(), source.discover(scanHost));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return next.build();
    }

    /** A new plugin instance on the same directories (a restart when the previous one was closed). */
    void start() {
        start(b -> b);
    }

    /** A new plugin instance on the same directories, with settings of its own on top of the harness's. */
    void start(java.util.function.UnaryOperator<DraPlugin.Builder> settings) {
        ClaimReader reader = ref -> {
            reads.incrementAndGet();
            readNames.add(ref.name());
            onRead.accept(ref);
            AllocatedClaim claim = apiServer.get(ref.uid());
            return claim == null ? new ClaimReader.Unavailable("claim " + ref + " not found")
                    : new ClaimReader.Allocated(claim);
        };
        try {
            // Checks only when a test asks (awaitChecks) or the directory watch sees a change.
            plugin = settings.apply(DraPlugin.builder(Handovers.forHost(host.host(), sources), reader).pool(POOL)
                    .kubeletRoot(dir.resolve("kubelet")).cdiDir(cdiDir()).stateDir(dir.resolve("state"))
                    .hostRoot(host.root()).snapshot(snapshot).observer(heard).devicePool(pools::add)
                    .threads(threads).checkEvery(java.time.Duration.ofHours(1))).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Stops the plugin as a process exit would leave things: files and checkpoint stay. */
    void stop() {
        plugin.close();
    }

    Path cdiDir() {
        return dir.resolve("cdi");
    }

    Path checkpoint() {
        return dir.resolve("state/dra-prepared-claims");
    }

    /** Puts a claim named directly in the pod into the API server, allocated these devices of ours. */
    Claim allocate(String name, String uid, String request, String... devices) {
        return allocate(name, uid, Optional.empty(), request, devices);
    }

    /** Puts a claim into the API server, from a template when {@code podClaimName} is given. */
    Claim allocate(String name, String uid, Optional<String> podClaimName, String request, String... devices) {
        List<AllocatedDevice> results = java.util.Arrays.stream(devices)
                .map(d -> new AllocatedDevice(request, DRIVER, POOL, d)).toList();
        apiServer.put(uid, new AllocatedClaim(new ClaimRef("vms", name, uid), podClaimName, results));
        return TestKubelet.claim("vms", name, uid);
    }

    /** One claim's answer to a Prepare of these claims. */
    NodePrepareResourceResponse prepare(Claim claim) {
        return kubelet.prepare(plugin.draSocket(), claim).getClaimsOrThrow(claim.getUid());
    }

    /** One claim's Unprepare error (empty: unprepared). */
    String unprepare(Claim claim) {
        return kubelet.unprepare(plugin.draSocket(), claim).getClaimsOrThrow(claim.getUid()).getError();
    }

    /** What a CDI runtime gives the container for these ids, its mounts copied under {@code containerRoot}. */
    CdiRuntime.Edits run(List<String> cdiIds, Path containerRoot) throws IOException {
        CdiRuntime.Edits edits = CdiRuntime.inject(cdiDir(), cdiIds);
        CdiRuntime.mount(edits, containerRoot);
        return edits;
    }

    /** Counts what a plugin reports; written on its claims thread, read by the test after a call returned. */
    static final class Heard implements DraObserver {
        final AtomicInteger prepared = new AtomicInteger();
        final AtomicInteger prepareFailed = new AtomicInteger();
        final AtomicInteger unprepared = new AtomicInteger();
        final AtomicInteger unprepareFailed = new AtomicInteger();
        final AtomicInteger preparedClaims = new AtomicInteger(-1);

        @Override
        public void claimPrepared(boolean ok) {
            (ok ? prepared : prepareFailed).incrementAndGet();
        }

        @Override
        public void claimUnprepared(boolean ok) {
            (ok ? unprepared : unprepareFailed).incrementAndGet();
        }

        @Override
        public void preparedClaims(int count) {
            preparedClaims.set(count);
        }
    }

    @Override
    public void close() {
        kubelet.close();
        plugin.close();
    }
}
