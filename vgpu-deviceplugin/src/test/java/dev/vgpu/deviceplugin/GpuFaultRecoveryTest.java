package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.L40S_1Q;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static dev.vgpu.deviceplugin.Fixtures.vf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.testsupport.FakeScheduler;
import com.google.common.jimfs.Configuration;
import com.google.common.jimfs.Jimfs;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import dev.vgpu.testsupport.CapturedStderr;
import java.nio.file.FileSystem;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recovery from GPU faults after a quiet period, on a scheduler the test drives by hand ({@link FakeScheduler}): no
 * sleeps, time moves only in {@code clock.forward}. The probe is a fake of NVML's answer (the true boundary).
 *
 * <p>Threads: the test thread posts marks and moves the clock; {@link FakeScheduler} runs posted tasks on the posting
 * thread and timers on the test thread, so the manager's context runs here unless a gRPC thread is draining it, which
 * is why every read goes through {@code manager.inContext}. The probe's answer is an atomic the test sets.
 */
class GpuFaultRecoveryTest {

    private static final Duration QUIET = Duration.ofMinutes(1);
    private static final Duration NO_POLL = Duration.ofHours(10);
    private static final PciAddress GPU = PciAddress.parse("0000:41:00.0");
    private static final PciAddress CARD = PciAddress.parse("0000:1b:00.0");

    @TempDir
    Path tmp;

    private final FakeScheduler clock = new FakeScheduler();
    private final AtomicReference<Optional<String>> nvmlAnswer = new AtomicReference<>(Optional.empty());
    private final List<PciAddress> probed = new CopyOnWriteArrayList<>();
    private FileSystem fs;
    private SysfsTree host;
    private StandInKubelet kubelet;
    private PluginManager manager;

    @BeforeEach
    void start() throws Exception {
        fs = Jimfs.newFileSystem(Configuration.unix());
        host = SysfsTree.at(fs.getPath("/host"));
        host.addGroupNode(41).addGroupNode(100).addGroupNode(101).addGroupNode(102);
        Path dir = tmp.resolve("dp");
        kubelet = StandInKubelet.start(dir);
        manager = manager(dir, QUIET, NO_POLL);
    }

    private PluginManager manager(Path dir, Duration quiet, Duration poll) {
        return PluginManager.builder().hostRoot(host.root()).devicePluginDir(dir).healthPollInterval(poll)
                .gpuFaultRecovery(quiet, gpu -> {
                    probed.add(gpu);
                    return nvmlAnswer.get();
                }).scheduler(clock).build();
    }

    @AfterEach
    void stop() throws Exception {
        manager.close();
        kubelet.close();
        fs.close();
    }

    @Test
    void aGpuIsHealthyAgainOnceTheQuietPeriodHasPassedAndNvmlAnswers() throws Exception {
        manager.apply(snapshot(passthrough(GPU.toString(), 41, 0)));
        kubelet.await(Harness.WAIT, k -> k.streaming(H200.fullName()));

        String log = CapturedStderr.of(() -> {
            mark(GPU, OptionalInt.empty(), "critical XID 79");
            assertThat(healthy(H200, GPU.toString())).isFalse();

            clock.forward(QUIET.minusMillis(1));
            assertThat(healthy(H200, GPU.toString())).as("one millisecond early").isFalse();
            assertThat(probed).isEmpty();

            clock.forward(Duration.ofMillis(1));
            assertThat(healthy(H200, GPU.toString())).isTrue();
        });

        assertThat(probed).containsExactly(GPU);
        assertThat(manager.inContext(manager::faultyGpus)).isEmpty();
        kubelet.await(Harness.WAIT, k -> k.resources().get(H200.fullName()).get(0).healthy());
        assertThat(log).contains("GPU 0000:41:00.0 reported critical XID 79: devices 0000:41:00.0 ("
                + H200.fullName() + ") are unhealthy; healthy again after 1m0s without another counted XID, if NVML"
                + " answers for the GPU", "GPU 0000:41:00.0 had no counted XID for 1m0s since critical XID 79 and NVML"
                + " answers for it: devices 0000:41:00.0 (" + H200.fullName() + ") are healthy again");
        assertThat(clock.pending()).as("only the poll waits").containsExactly(NO_POLL.minus(QUIET));
    }

    @Test
    void aNewMarkDuringTheQuietPeriodStartsItAgain() {
        manager.apply(snapshot(passthrough(GPU.toString(), 41, 0)));
        mark(GPU, OptionalInt.empty(), "critical XID 79");
        clock.forward(Duration.ofSeconds(40));
        mark(GPU, OptionalInt.empty(), "critical XID 48");

        clock.forward(Duration.ofSeconds(40));
        assertThat(healthy(H200, GPU.toString())).as("80 s after the first XID, 40 s after the second").isFalse();
        assertThat(probed).as("the first XID's timer was cancelled, never fired").isEmpty();

        clock.forward(Duration.ofSeconds(20));
        assertThat(healthy(H200, GPU.toString())).isTrue();
        assertThat(probed).containsExactly(GPU);
    }

    @Test
    void aGpuNvmlDoesNotAnswerForStaysUnhealthyAndIsAskedAgainUntilItAnswers() {
        manager.apply(snapshot(passthrough(GPU.toString(), 41, 0)));
        nvmlAnswer.set(Optional.of("NVML_ERROR_GPU_IS_LOST from nvmlDeviceGetHandleByPciBusId_v2(0000:41:00.0)"));
        mark(GPU, OptionalInt.empty(), "critical XID 79");

        String log = CapturedStderr.of(() -> {
            for (int i = 1; i <= 3; i++) {
                clock.forward(QUIET);
                assertThat(healthy(H200, GPU.toString())).isFalse();
                assertThat(probed).hasSize(i);
            }
        });
        assertThat(log).containsOnlyOnce("GPU 0000:41:00.0 had no counted XID for 1m0s, but NVML does not answer for"
                + " it (NVML_ERROR_GPU_IS_LOST from nvmlDeviceGetHandleByPciBusId_v2(0000:41:00.0)): its devices stay"
                + " unhealthy; asking again every 1m0s");

        nvmlAnswer.set(Optional.empty());
        clock.forward(QUIET);
        assertThat(healthy(H200, GPU.toString())).isTrue();
        assertThat(probed).hasSize(4);
    }

    @Test
    void aMarkWhileNvmlIsSilentStartsAFullQuietPeriodAgain() {
        manager.apply(snapshot(passthrough(GPU.toString(), 41, 0)));
        nvmlAnswer.set(Optional.of("GPU is lost"));
        mark(GPU, OptionalInt.empty(), "critical XID 79");
        clock.forward(QUIET);
        nvmlAnswer.set(Optional.empty());
        mark(GPU, OptionalInt.empty(), "critical XID 79");

        clock.forward(QUIET.minusSeconds(1));
        assertThat(healthy(H200, GPU.toString())).as("the retry of the earlier period was dropped").isFalse();
        assertThat(probed).hasSize(1);
        clock.forward(Duration.ofSeconds(1));
        assertThat(healthy(H200, GPU.toString())).isTrue();
    }

    @Test
    void recoveryClearsOnlyTheXidAGoneGroupNodeKeepsTheDeviceUnhealthyAndTheOtherWayRound() throws Exception {
        manager.close();
        Duration poll = Duration.ofMinutes(10);
        manager = manager(tmp.resolve("dp"), QUIET, poll);
        manager.apply(snapshot(passthrough(GPU.toString(), 41, 0)));

        // XID and group node gone; the XID recovers first, the node is still gone.
        mark(GPU, OptionalInt.empty(), "critical XID 79");
        host.removeGroupNode(41);
        clock.forward(poll);
        assertThat(manager.inContext(manager::faultyGpus)).as("the XID has recovered").isEmpty();
        assertThat(health(H200, GPU.toString())).isEqualTo(new dev.vgpu.attach.DeviceHealth(false, false, ""));
        host.addGroupNode(41);
        clock.forward(poll);
        assertThat(healthy(H200, GPU.toString())).isTrue();

        // The other way round: the node comes back while the XID's quiet period runs.
        host.removeGroupNode(41);
        clock.forward(poll);
        assertThat(health(H200, GPU.toString())).isEqualTo(new dev.vgpu.attach.DeviceHealth(false, false, ""));
        host.addGroupNode(41);
        clock.forward(poll.minusSeconds(30));
        mark(GPU, OptionalInt.empty(), "critical XID 48");
        clock.forward(Duration.ofSeconds(30)); // the poll sees the node; 30 s of the XID's minute have passed
        assertThat(health(H200, GPU.toString())).isEqualTo(new dev.vgpu.attach.DeviceHealth(true, true, ""));
        clock.forward(QUIET);
        assertThat(healthy(H200, GPU.toString())).isTrue();
    }

    @Test
    void anXidOfOneGpuInstanceMarksTheVfsOnItAndThoseWithoutAKnownInstanceOnly() {
        Device onOne = onInstance(vf(L40S_1Q, "0000:1b:00.4", CARD.toString(), 100, 0), 1);
        Device onTwo = onInstance(vf(L40S_1Q, "0000:1b:00.5", CARD.toString(), 101, 0), 2);
        Device unknown = vf(L40S_1Q, "0000:1b:00.6", CARD.toString(), 102, 0);
        manager.apply(snapshot(onOne, onTwo, unknown));

        mark(CARD, OptionalInt.of(1), "critical XID 79");
        assertThat(health(L40S_1Q)).isEqualTo(Map.of("0000:1b:00.4", false, "0000:1b:00.5", true,
                "0000:1b:00.6", false));

        mark(CARD, OptionalInt.of(2), "critical XID 79");
        assertThat(health(L40S_1Q)).isEqualTo(Map.of("0000:1b:00.4", false, "0000:1b:00.5", false,
                "0000:1b:00.6", false));

        clock.forward(QUIET);
        assertThat(health(L40S_1Q)).as("one quiet period for the GPU").isEqualTo(Map.of("0000:1b:00.4", true,
                "0000:1b:00.5", true, "0000:1b:00.6", true));

        mark(CARD, OptionalInt.of(1), "critical XID 79");
        mark(CARD, OptionalInt.empty(), "critical XID 79");
        assertThat(health(L40S_1Q)).as("an XID of the whole GPU covers every instance").isEqualTo(Map.of(
                "0000:1b:00.4", false, "0000:1b:00.5", false, "0000:1b:00.6", false));
    }

    @Test
    void aNewPeriodAppliesToFaultsAlreadyThereCountedFromNowAndZeroStopsRecovery() throws Exception {
        manager.close();
        manager = manager(tmp.resolve("dp"), Duration.ZERO, NO_POLL);
        manager.apply(snapshot(passthrough(GPU.toString(), 41, 0)));
        mark(GPU, OptionalInt.empty(), "critical XID 79");
        clock.forward(Duration.ofHours(1));
        assertThat(healthy(H200, GPU.toString())).as("no recovery period: it stays").isFalse();

        manager.recoverGpuFaultsAfter(QUIET);
        settled(() -> null);
        clock.forward(QUIET.minusSeconds(1));
        assertThat(healthy(H200, GPU.toString())).isFalse();
        manager.recoverGpuFaultsAfter(Duration.ZERO);
        settled(() -> null);
        clock.forward(Duration.ofHours(1));
        assertThat(healthy(H200, GPU.toString())).as("recovery turned off again").isFalse();
        assertThat(probed).isEmpty();

        manager.recoverGpuFaultsAfter(QUIET);
        settled(() -> null);
        clock.forward(QUIET);
        assertThat(healthy(H200, GPU.toString())).isTrue();
        assertThatThrownBy(() -> manager.recoverGpuFaultsAfter(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("zero or positive");
    }

    @Test
    void closingTheManagerLeavesNoRecoveryTimerOnTheInjectedScheduler() {
        manager.apply(snapshot(passthrough(GPU.toString(), 41, 0)));
        mark(GPU, OptionalInt.empty(), "critical XID 79");
        assertThat(healthy(H200, GPU.toString())).as("the mark has landed").isFalse();
        assertThat(clock.pending()).contains(QUIET);

        manager.close();

        assertThat(clock.pending()).isEmpty();
        clock.forward(QUIET);
        assertThat(probed).isEmpty();
    }

    /** A mark, landed: a gRPC thread may be draining the context when it is posted, so wait for the context. */
    private void mark(PciAddress gpu, OptionalInt instance, String reason) {
        manager.markGpuUnhealthy(gpu, instance, reason);
        settled(() -> null);
    }

    private static Device onInstance(Device d, int instance) {
        return Device.builder(d.id(), d.resource(), d.source(), d.attachment()).parent(d.parent().orElseThrow())
                .iommuGroup(d.iommuGroup().orElseThrow()).numaNode(d.numaNode()).gpuInstance(OptionalInt.of(instance))
                .build();
    }

    private boolean healthy(dev.vgpu.core.ResourceName resource, String id) {
        return settled(() -> manager.plugin(resource).advertised().isHealthy(id));
    }

    private dev.vgpu.attach.DeviceHealth health(dev.vgpu.core.ResourceName resource, String id) {
        return settled(() -> manager.plugin(resource).advertised().health().get(id));
    }

    private Map<String, Boolean> health(dev.vgpu.core.ResourceName resource) {
        return settled(() -> {
            AdvertisedDevices advertised = manager.plugin(resource).advertised();
            Map<String, Boolean> out = new TreeMap<>();
            advertised.devices().forEach(d -> out.put(d.id(), advertised.isHealthy(d.id())));
            return out;
        });
    }

    /** A read once the check rounds and marks posted so far have landed (see HandDrivenManagerTest#settledHealth). */
    private <T> T settled(java.util.function.Supplier<T> read) {
        for (int i = 0; i < 3; i++) {
            manager.inContext(() -> null);
        }
        return manager.inContext(read);
    }
}
