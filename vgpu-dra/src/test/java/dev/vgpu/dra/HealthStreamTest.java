package dev.vgpu.dra;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.Reconciler;
import dev.vgpu.core.Snapshot;
import dev.vgpu.dra.grpc.health.v1.DeviceHealth;
import dev.vgpu.dra.grpc.health.v1.HealthStatus;
import dev.vgpu.dra.grpc.health.v1.NodeWatchResourcesResponse;
import dev.vgpu.testsupport.RecordingThreads;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kubelet's {@code DRAResourceHealth} streams (docs/DRA.md, "Does (health stream)") over real unix sockets,
 * on the harness's node (a passthrough H200, two L40S VF vGPUs, a T4 mdev): GetInfo lists both health versions
 * after the DRAPlugin ones; every device is UNKNOWN until the first verdict; each stream gets the full list at
 * once, on every change of the unhealthy ids or of the snapshot, and again while nothing changes; both versions
 * carry the same; closing the plugin ends the streams and the health thread.
 */
class HealthStreamTest {

    static final List<String> ALL = List.of(DraHarness.MDEV, DraHarness.GPU, DraHarness.VF, DraHarness.VF2);

    @TempDir
    Path tmp;
    DraHarness node;
    /** Makes the health stream's thread, so a test asks whether that thread ended (not the JVM's threads). */
    final RecordingThreads threads = new RecordingThreads(HealthStreams.THREAD_NAME);

    @BeforeEach
    void start() {
        node = new DraHarness(tmp);
        node.stop();
        // An hour: no refresh in these tests unless one asks for it (no message arrives but for the events here).
        node.start(b -> b.healthStream(true).healthRefresh(Duration.ofHours(1)).healthThreads(threads));
    }

    @AfterEach
    void stop() {
        node.close();
    }

    static Map<String, HealthStatus> health(NodeWatchResourcesResponse message) {
        Map<String, HealthStatus> byName = new TreeMap<>();
        for (DeviceHealth d : message.getDevicesList()) {
            assertThat(d.getDevice().getPoolName()).isEqualTo(DraHarness.POOL);
            byName.put(d.getDevice().getDeviceName(), d.getHealth());
        }
        assertThat(byName).as("device names unique").hasSize(message.getDevicesCount());
        return byName;
    }

    static Map<String, HealthStatus> allHealthyBut(String... unhealthy) {
        Map<String, HealthStatus> expected = new TreeMap<>();
        ALL.forEach(name -> expected.put(name, HealthStatus.HEALTHY));
        for (String name : unhealthy) {
            expected.put(name, HealthStatus.UNHEALTHY);
        }
        return expected;
    }

    @Test
    void getInfoListsBothHealthVersionsAfterTheDraPluginOnes() {
        assertThat(node.kubelet.getInfo(node.plugin.registrationSocket()).getSupportedVersionsList()).containsExactly(
                "v1.DRAPlugin", "v1beta1.DRAPlugin", "v1.DRAResourceHealth", "v1alpha1.DRAResourceHealth");
    }

    @Test
    void aStreamGetsEveryDeviceAtOnceThenEachChangeOfTheUnhealthyIds() throws Exception {
        Instant before = Instant.now();
        var watch = node.kubelet.watchHealth(node.plugin.draSocket());

        // Before the first verdict: every device UNKNOWN, saying why (a restart must not call a faulty device healthy).
        NodeWatchResourcesResponse first = watch.next();
        Map<String, HealthStatus> unknown = new TreeMap<>();
        ALL.forEach(name -> unknown.put(name, HealthStatus.UNKNOWN));
        assertThat(health(first)).isEqualTo(unknown);
        assertThat(first.getDevicesList()).extracting(d -> d.getDevice().getDeviceName()).isSorted();
        assertThat(first.getDevices(0).getLastUpdatedTime())
                .isBetween(before.getEpochSecond(), Instant.now().getEpochSecond());
        assertThat(first.getDevicesList()).allMatch(d -> d.getMessage().equals(HealthStreams.UNKNOWN_MESSAGE));

        node.plugin.health(Set.of("0000:1b:00.4"));
        NodeWatchResourcesResponse second = watch.next();
        assertThat(second.getDevicesList()).filteredOn(d -> d.getHealth() == HealthStatus.HEALTHY)
                .hasSize(ALL.size() - 1).allMatch(d -> d.getMessage().isEmpty());
        assertThat(health(second)).isEqualTo(allHealthyBut(DraHarness.VF));
        DeviceHealth vf = second.getDevicesList().stream()
                .filter(d -> d.getDevice().getDeviceName().equals(DraHarness.VF)).findFirst().orElseThrow();
        assertThat(vf.getMessage()).isNotEmpty().hasSizeLessThanOrEqualTo(1024).doesNotContain("Exception");

        node.plugin.health(Set.of("0000:1b:00.4"));  // the same ids: no message
        node.plugin.health(Set.of(DraHarness.UUID, "0000:41:00.0"));
        assertThat(health(watch.next())).isEqualTo(allHealthyBut(DraHarness.MDEV, DraHarness.GPU));

        node.plugin.health(Set.of());
        assertThat(health(watch.next())).isEqualTo(allHealthyBut());
    }

    @Test
    void aFirstVerdictOfNoFaultsMakesEveryDeviceHealthy() throws Exception {
        var watch = node.kubelet.watchHealth(node.plugin.draSocket());
        assertThat(health(watch.next()).values()).containsOnly(HealthStatus.UNKNOWN);

        node.plugin.health(Set.of());
        assertThat(health(watch.next())).isEqualTo(allHealthyBut());
        node.plugin.health(Map.of()); // the same verdict again: no message
        node.plugin.health(Set.of(DraHarness.UUID));
        assertThat(health(watch.next())).isEqualTo(allHealthyBut(DraHarness.MDEV));
    }

    @Test
    void anUnhealthyDeviceCarriesItsReasonCutToWhatTheKubeletKeeps() throws Exception {
        var watch = node.kubelet.watchHealth(node.plugin.draSocket());
        watch.next();

        node.plugin.health(Map.of("0000:1b:00.4", "/dev/vfio/100 is gone",
                "0000:41:00.0", "x".repeat(5000)));
        Map<String, String> messages = new java.util.TreeMap<>();
        watch.next().getDevicesList().forEach(d -> messages.put(d.getDevice().getDeviceName(), d.getMessage()));

        assertThat(messages.get(DraHarness.VF)).isEqualTo("/dev/vfio/100 is gone");
        assertThat(messages.get(DraHarness.GPU)).hasSize(1024).startsWith("xxx").endsWith("...");
        assertThat(messages.get(DraHarness.VF2)).isEmpty();

        // A cut never splits a surrogate pair.
        String cut = HealthStreams.message("x".repeat(1020) + "\uD83D\uDE00" + "y".repeat(10));
        assertThat(cut).isEqualTo("x".repeat(1020) + "...");

        // Only the reason changed: that is a change too.
        node.plugin.health(Map.of("0000:1b:00.4", "its GPU reported a critical XID", "0000:41:00.0", ""));
        watch.next().getDevicesList().forEach(d -> messages.put(d.getDevice().getDeviceName(), d.getMessage()));
        assertThat(messages.get(DraHarness.VF)).isEqualTo("its GPU reported a critical XID");
        assertThat(messages.get(DraHarness.GPU)).isEqualTo(HealthStreams.UNHEALTHY_MESSAGE);
    }

    @Test
    void aNewSnapshotWithOtherDevicesIsSentAtOnce() throws Exception {
        var watch = node.kubelet.watchHealth(node.plugin.draSocket());
        assertThat(health(watch.next())).containsOnlyKeys(ALL);

        node.host.removeMdev(DraHarness.UUID);
        Snapshot fewer = node.scan();
        node.plugin.apply(fewer, Reconciler.plan(node.snapshot, fewer));

        assertThat(health(watch.next())).containsOnlyKeys(DraHarness.GPU, DraHarness.VF, DraHarness.VF2);
    }

    @Test
    void bothVersionsCarryTheSameReports() throws Exception {
        node.plugin.health(Set.of("0000:1b:00.5"));
        var v1 = node.kubelet.watchHealth(node.plugin.draSocket());
        var v1alpha1 = node.kubelet.watchHealthV1alpha1(node.plugin.draSocket());

        Map<String, HealthStatus> current = health(v1.next());
        assertThat(current).isEqualTo(allHealthyBut(DraHarness.VF2));
        Map<String, String> alpha = new TreeMap<>();
        v1alpha1.next().getDevicesList().forEach(d -> {
            assertThat(d.getDevice().getPoolName()).isEqualTo(DraHarness.POOL);
            alpha.put(d.getDevice().getDeviceName(), d.getHealth().name());
        });
        Map<String, String> expected = new TreeMap<>();
        current.forEach((name, status) -> expected.put(name, status.name()));
        assertThat(alpha).isEqualTo(expected);
    }

    /** Every open stream gets each change; one the kubelet cancelled is dropped and the others go on. */
    @Test
    void aCancelledStreamIsDroppedAndTheOthersGoOn() throws Exception {
        var first = node.kubelet.watchHealth(node.plugin.draSocket());
        var second = node.kubelet.watchHealth(node.plugin.draSocket());
        first.next();
        second.next();

        first.cancel();
        node.plugin.health(Set.of("0000:41:00.0"));

        assertThat(health(second.next())).isEqualTo(allHealthyBut(DraHarness.GPU));
    }

    @Test
    void anUnchangedListIsSentAgainWithoutAnyChange() throws Exception {
        assertThat(HealthStreams.REFRESH).as("inside the kubelet's 30 s").isLessThan(Duration.ofSeconds(30));
        node.stop();
        node.start(b -> b.healthStream(true).healthRefresh(Duration.ofMillis(20)).healthThreads(threads));
        node.plugin.health(Set.of());
        var watch = node.kubelet.watchHealth(node.plugin.draSocket());

        for (int i = 0; i < 3; i++) {
            assertThat(health(watch.next())).isEqualTo(allHealthyBut());
        }
    }

    @Test
    void closingThePluginEndsTheStreamsAndTheHealthThread() throws Exception {
        var watch = node.kubelet.watchHealth(node.plugin.draSocket());
        watch.next();

        node.plugin.close();

        assertThat(watch.completed()).as("the stream ended normally").isTrue();
        assertThat(threads.made()).as("the health stream's thread came from the factory").isEqualTo(1);
        // The pool reports terminated a moment before its last worker has returned: wait for the thread to end.
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(threads.aliveNames()).as("threads left").isEmpty());
        node.start(); // for stop(): a plugin without the health stream
        assertThat(node.kubelet.getInfo(node.plugin.registrationSocket()).getSupportedVersionsList())
                .containsExactly("v1.DRAPlugin", "v1beta1.DRAPlugin");
        node.plugin.health(Set.of("0000:41:00.0")); // nothing to report to: no effect, no error
    }
}
