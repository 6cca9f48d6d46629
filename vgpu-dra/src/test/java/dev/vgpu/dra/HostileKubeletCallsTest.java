package dev.vgpu.dra;

import static dev.vgpu.dra.DraHarness.GPU;
import static dev.vgpu.dra.DraHarness.VF;
import static dev.vgpu.dra.DraHarness.VF2;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.dra.grpc.health.v1.DRAResourceHealthGrpc;
import dev.vgpu.dra.grpc.health.v1.NodeWatchResourcesRequest;
import dev.vgpu.dra.grpc.health.v1.NodeWatchResourcesResponse;
import dev.vgpu.dra.grpc.v1.Claim;
import dev.vgpu.dra.grpc.v1.DRAPluginGrpc;
import dev.vgpu.dra.grpc.v1.NodePrepareResourcesRequest;
import dev.vgpu.dra.grpc.v1.NodePrepareResourcesResponse;
import dev.vgpu.testsupport.CapturedStderr;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a hostile or broken client of the DRA sockets, or a hung API server behind the claim reader, must not do to
 * the plugin (docs/RELIABILITY.md, "DRA mode"): calls too large, streams without end, reads that never answer,
 * claims that name too much, text that forges log lines. Each test is one row of that table.
 */
@Tag("reliability")
class HostileKubeletCallsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    /** A log line of slf4j-simple as the tests configure it: it starts with the time. */
    private static final Pattern LOG_LINE = Pattern.compile("^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} .*");

    @TempDir
    Path tmp;
    DraHarness h;
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final ExecutorService callers = Executors.newCachedThreadPool();

    @AfterEach
    void stop() throws InterruptedException {
        callers.shutdownNow();
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (h != null) {
            h.close();
        }
    }

    private ManagedChannel dial(Path socket) {
        ManagedChannel channel = Grpc.newChannelBuilder("unix://" + socket, InsecureChannelCredentials.create())
                .maxInboundMessageSize(16 << 20).build();
        channels.add(channel);
        return channel;
    }

    @Test
    void aPrepareOfHundredFortyThousandClaimsIsRefusedNamingTheLimitAndUnprepareStillAnswers() {
        h = new DraHarness(tmp);
        NodePrepareResourcesRequest.Builder huge = NodePrepareResourcesRequest.newBuilder();
        for (int i = 0; i < 140_000; i++) {
            huge.addClaims(TestKubelet.claim("n", "c" + i, Integer.toString(i)));
        }
        NodePrepareResourcesRequest request = huge.build();
        assertThat(request.getSerializedSize()).isLessThan(4 << 20);

        CapturedStderr.Outcome<Throwable> refused = CapturedStderr.withAnswer(() -> {
            try {
                DRAPluginGrpc.newBlockingStub(dial(h.plugin.draSocket())).withDeadlineAfter(45, TimeUnit.SECONDS)
                        .nodePrepareResources(request);
                return null;
            } catch (StatusRuntimeException e) {
                return e;
            }
        });

        assertThat(refused.answer()).isInstanceOf(StatusRuntimeException.class);
        Status status = ((StatusRuntimeException) refused.answer()).getStatus();
        assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(status.getDescription()).contains("140000 claims", "at most 64");
        // No line per claim: the refusal is one line.
        assertThat(refused.log().lines().filter(l -> l.contains("claim"))).hasSizeLessThan(3);
        // The kubelet's Unprepare, and a normal Prepare, still answer.
        Claim claim = h.allocate("vf", "aaaaaaaa-0000-4000-8000-00000000000a", "gpu", VF);
        assertThat(h.prepare(claim).getError()).isEmpty();
        assertThat(h.unprepare(claim)).isEmpty();
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void healthStreamsBeyondTheBoundsAreEndedAndTheNewestStreamGetsTheList() throws Exception {
        h = new DraHarness(tmp);
        h.stop();
        h.start(b -> b.healthStream(true));
        int connections = 40;
        int perConnection = 16;
        AtomicInteger exhausted = new AtomicInteger();
        List<CountDownLatch> ended = new ArrayList<>();
        for (int c = 0; c < connections; c++) {
            DRAResourceHealthGrpc.DRAResourceHealthStub stub = DRAResourceHealthGrpc.newStub(dial(h.plugin.draSocket()));
            for (int s = 0; s < perConnection; s++) {
                CountDownLatch end = new CountDownLatch(1);
                ended.add(end);
                stub.nodeWatchResources(NodeWatchResourcesRequest.getDefaultInstance(), new StreamObserver<>() {
                    @Override
                    public void onNext(NodeWatchResourcesResponse value) {
                    }

                    @Override
                    public void onError(Throwable t) {
                        if (Status.fromThrowable(t).getCode() == Status.Code.RESOURCE_EXHAUSTED) {
                            exhausted.incrementAndGet();
                        }
                        end.countDown();
                    }

                    @Override
                    public void onCompleted() {
                        end.countDown();
                    }
                });
            }
        }
        int opened = connections * perConnection;
        // At most 16 stay open (4 a connection); every other one is ended with RESOURCE_EXHAUSTED.
        Awaitility.await().atMost(WAIT).until(() -> ended.stream().filter(l -> l.getCount() == 0).count()
                >= opened - 16);
        assertThat(exhausted.get()).isGreaterThanOrEqualTo(opened - 16);
        // The newest stream (the kubelet's, reopened) is admitted and gets the full list.
        TestKubelet.HealthWatch<NodeWatchResourcesResponse> kubelet = h.kubelet.watchHealth(h.plugin.draSocket());
        assertThat(kubelet.next().getDevicesCount()).isEqualTo(4);
        // Prepare still answers.
        Claim claim = h.allocate("vf", "aaaaaaaa-0000-4000-8000-00000000000a", "gpu", VF);
        assertThat(h.prepare(claim).getError()).isEmpty();
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void anUnprepareIsAnsweredWhileAClaimReadHangsAndACallTheKubeletGaveUpIsNeverRead() throws Exception {
        h = new DraHarness(tmp);
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        h.onRead = ref -> {
            if (ref.name().equals("hung")) {
                reading.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        Claim prepared = h.allocate("vf", "aaaaaaaa-0000-4000-8000-00000000000a", "gpu", VF);
        assertThat(h.prepare(prepared).getError()).isEmpty();
        Claim hung = h.allocate("hung", "bbbbbbbb-0000-4000-8000-00000000000b", "gpu", GPU);
        Future<NodePrepareResourcesResponse> slow = callers.submit(() -> h.kubelet.prepare(h.plugin.draSocket(), hung));
        assertThat(reading.await(30, TimeUnit.SECONDS)).isTrue();
        // A call the kubelet gives up on while the read hangs.
        Claim abandoned = h.allocate("abandoned", "cccccccc-0000-4000-8000-00000000000c", "gpu", VF2);
        assertThatThrownBy(() -> DRAPluginGrpc.newBlockingStub(dial(h.plugin.draSocket()))
                .withDeadlineAfter(1, TimeUnit.SECONDS).nodePrepareResources(NodePrepareResourcesRequest.newBuilder()
                        .addClaims(abandoned).build())).isInstanceOf(StatusRuntimeException.class);

        // Unprepare needs no API server: answered while the read still hangs.
        Future<String> unprepared = callers.submit(() -> h.unprepare(prepared));
        assertThat(unprepared.get(20, TimeUnit.SECONDS)).isEmpty();
        assertThat(release.getCount()).isEqualTo(1);

        release.countDown();
        assertThat(slow.get(30, TimeUnit.SECONDS).getClaimsOrThrow(hung.getUid()).getError()).isEmpty();
        // The abandoned call is skipped: once a later call is answered, its claim was never read.
        Claim later = h.allocate("later", "dddddddd-0000-4000-8000-00000000000d", "gpu", VF);
        assertThat(h.prepare(later).getError()).isEmpty();
        assertThat(h.readNames).doesNotContain("abandoned");
    }

    @Test
    void bothSocketsDeletedAreServedAgainAndTheKubeletCanRegisterAndPrepare() throws Exception {
        h = new DraHarness(tmp);
        Files.delete(h.plugin.draSocket());
        Files.delete(h.plugin.registrationSocket());

        Awaitility.await().atMost(WAIT).until(() -> Files.exists(h.plugin.draSocket())
                && Files.exists(h.plugin.registrationSocket()));
        assertThat(h.kubelet.getInfo(h.plugin.registrationSocket()).getEndpoint())
                .isEqualTo(h.plugin.draSocket().toString());
        h.kubelet.notify(h.plugin.registrationSocket(), true, "");
        Claim claim = h.allocate("vf", "aaaaaaaa-0000-4000-8000-00000000000a", "gpu", VF);
        assertThat(h.prepare(claim).getError()).isEmpty();
    }

    @Test
    void aReCreatedClaimOfTheSameNameKeepsItsOwnFilesWhenTheOldOneIsUnprepared() throws Exception {
        h = new DraHarness(tmp);
        Claim old = h.allocate("gpu", "aaaaaaaa-0000-4000-8000-00000000000a", "gpu", VF);
        assertThat(h.prepare(old).getError()).isEmpty();
        Claim recreated = h.allocate("gpu", "bbbbbbbb-0000-4000-8000-00000000000b", "gpu", VF2);
        assertThat(h.prepare(recreated).getError()).isEmpty();

        assertThat(h.unprepare(old)).isEmpty();

        // The new claim's container still finds its metadata, naming its own device.
        Path container = tmp.resolve("container");
        CdiRuntime.Edits edits = h.run(h.kubelet.prepare(h.plugin.draSocket(), recreated)
                .getClaimsOrThrow(recreated.getUid()).getDevicesList().stream()
                .flatMap(d -> d.getCdiDeviceIdsList().stream()).toList(), container);
        assertThat(edits.mounts()).allSatisfy(m -> assertThat(Path.of(m.hostPath())).exists());
        assertThat(KubeVirtMetadataReader.read(container, List.of(KubeVirtMetadataReader.VmiClaim.named("g", "gpu")),
                "g", "gpu")).isEqualTo(new KubeVirtMetadataReader.Pci("0000:1b:00.5"));
    }

    @Test
    void aClaimWithAThousandResultsIsRefusedNamingTheLimitAndWritesNothing() throws Exception {
        h = new DraHarness(tmp);
        String uid = "aaaaaaaa-0000-4000-8000-00000000000a";
        List<AllocatedDevice> results = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            results.add(new AllocatedDevice("r" + i, DraHarness.DRIVER, DraHarness.POOL, i % 2 == 0 ? VF : VF2));
        }
        h.apiServer.put(uid, new AllocatedClaim(new ClaimRef("vms", "many", uid), Optional.empty(), results));

        String error = h.prepare(TestKubelet.claim("vms", "many", uid)).getError();

        assertThat(error).contains("1000 allocation results", "at most 32");
        try (var files = Files.list(h.cdiDir())) {
            assertThat(files.toList()).isEmpty();
        }
        assertThat(tmp.resolve("kubelet/plugins/gpu.vgpu.dev/dra-device-metadata")).doesNotExist();
    }

    @Test
    void aClaimReferenceWithANewlineABidiControlAndFiveThousandCharactersIsOneEscapedCappedLine() {
        h = new DraHarness(tmp);
        String name = "\u202e" + "x".repeat(5_000);
        Claim hostile = TestKubelet.claim("vms\nERROR forged line", name, "aaaaaaaa-0000-4000-8000-00000000000a");

        CapturedStderr.Outcome<NodePrepareResourcesResponse> outcome = CapturedStderr.withAnswer(() ->
                h.kubelet.prepare(h.plugin.draSocket(), hostile));

        assertThat(outcome.answer().getClaimsOrThrow(hostile.getUid()).getError()).isNotEmpty()
                .doesNotContain("\n", "\u202e");
        List<String> lines = outcome.log().lines().filter(l -> !l.isBlank()).toList();
        assertThat(lines).isNotEmpty().allSatisfy(line -> {
            assertThat(line).matches(LOG_LINE).doesNotContain("\u202e");
            assertThat(line.length()).isLessThanOrEqualTo(4_096);
        });
        assertThat(String.valueOf(new ClaimRef("vms\nx", name, "u"))).doesNotContain("\n", "\u202e").hasSizeLessThan(600);
    }

    @Test
    void aSecondPluginForTheSameDriverAndKubeletRootIsRefusedNamingTheFirstWhoseSocketsStay() throws Exception {
        h = new DraHarness(tmp);
        DraPlugin second = null;
        Exception refused = null;
        try {
            second = DraPlugin.builder(dev.vgpu.attach.Handovers.forHost(h.host.host(), h.sources), ref -> {
                throw new AssertionError("never read");
            }).pool(DraHarness.POOL).kubeletRoot(tmp.resolve("kubelet")).cdiDir(h.cdiDir())
                    .stateDir(tmp.resolve("another-state")).start();
        } catch (java.io.IOException e) {
            refused = e;
        }
        if (second != null) {
            second.close();
        }

        assertThat(refused).isNotNull().hasMessageContaining("pid " + ProcessHandle.current().pid())
                .hasMessageContaining(tmp.resolve("kubelet/plugins/gpu.vgpu.dev").toString());
        assertThat(h.plugin.draSocket()).exists();
        assertThat(h.plugin.registrationSocket()).exists();
        Claim claim = h.allocate("vf", "aaaaaaaa-0000-4000-8000-00000000000a", "gpu", VF);
        assertThat(h.prepare(claim).getError()).isEmpty();
    }

    @Test
    void aJvmErrorOnAReadOrInTheOwnerIsThePluginsFailureForTheLivenessProbe() throws Exception {
        h = new DraHarness(tmp);
        assertThat(h.plugin.status().failure()).isEmpty();
        h.onRead = ref -> {
            throw new OutOfMemoryError("Java heap space (a test's)");
        };
        Claim claim = h.allocate("vf", "aaaaaaaa-0000-4000-8000-00000000000a", "gpu", VF);
        callers.submit(() -> h.kubelet.prepare(h.plugin.draSocket(), claim));

        Awaitility.await().atMost(WAIT).until(() -> h.plugin.status().failure().isPresent());
        assertThat(h.plugin.status().failure().get()).contains("OutOfMemoryError", "DRA plugin thread");

        // In the owner: the pool's listener runs there, told of an XID's verdict on a scheduler thread (an error
        // thrown through a test's own call would end the test JVM, as JUnit rethrows it).
        h.stop();
        h.start(b -> b.devicePool(pool -> {
            if (!pool.unhealthyIds().isEmpty()) {
                throw new OutOfMemoryError("Java heap space (a listener's)");
            }
        }));
        assertThat(h.plugin.status().failure()).isEmpty();
        h.plugin.markGpuUnhealthy(dev.vgpu.core.PciAddress.parse("0000:41:00.0"), java.util.OptionalInt.empty(),
                "critical XID 79");
        Awaitility.await().atMost(WAIT).until(() -> h.plugin.status().failure().isPresent());
        assertThat(h.plugin.status().failure().get()).contains("a listener's");
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void fourHundredInterleavedPreparesAndUnpreparesOfOneClaimEndConsistent() throws Exception {
        h = new DraHarness(tmp);
        Claim claim = h.allocate("vf", "aaaaaaaa-0000-4000-8000-00000000000a", "gpu", VF);
        // Eight callers at a time, under the bound on waiting calls (beyond it a call is RESOURCE_EXHAUSTED).
        ExecutorService eight = Executors.newFixedThreadPool(8);
        List<Future<String>> answers = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            answers.add(eight.submit(() -> h.kubelet.prepare(h.plugin.draSocket(), claim)
                    .getClaimsOrThrow(claim.getUid()).getError()));
            answers.add(eight.submit(() -> h.unprepare(claim)));
        }
        eight.shutdown();
        for (Future<String> answer : answers) {
            // Every call answered, each without error, whatever the order they ran in.
            assertThat(answer.get(120, TimeUnit.SECONDS)).isEmpty();
        }

        // Whatever state the storm left, one more of each leaves the claim prepared, then nothing at all.
        assertThat(h.prepare(claim).getError()).isEmpty();
        assertThat(h.unprepare(claim)).isEmpty();
        try (var files = Files.list(h.cdiDir())) {
            assertThat(files.toList()).isEmpty();
        }
        assertThat(Files.readString(h.checkpoint())).doesNotContain(claim.getUid());
        assertThat(h.plugin.status().preparedClaims()).isZero();
    }
}
