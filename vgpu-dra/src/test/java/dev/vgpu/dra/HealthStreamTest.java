package dev.vgpu.dra;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Reconciler;
import dev.vgpu.core.Snapshot;
import dev.vgpu.dra.grpc.health.v1.DeviceHealth;
import dev.vgpu.dra.grpc.health.v1.HealthStatus;
import dev.vgpu.dra.grpc.health.v1.NodeWatchResourcesResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kubelet's {@code DRAResourceHealth} streams (docs/DRA.md, "Does (health stream)") over real unix sockets,
 * on the harness's node (a passthrough H200, two L40S VF vGPUs, a T4 mdev): GetInfo lists both health versions
 * after the DRAPlugin ones; every device is UNKNOWN until the plugin's first health check; each stream gets the full
 * list at once, on every change of the verdicts (the host changed, an XID) or of the snapshot, and again while nothing
 * changes; both versions carry the same; closing the plugin ends the streams and every thread the plugin made. Each
 * change is followed by {@link DraPlugin#awaitChecks}, so the next message is the one it caused.
 */
class HealthStreamTest {

    static final List<String> ALL = List.of(DraHarness.MDEV, DraHarness.GPU, DraHarness.VF, DraHarness.VF2);

    @TempDir
    Path tmp;
    DraHarness node;
    @BeforeEach
    void start() throws Exception {
        node = new DraHarness(tmp);
        node.stop();
        // An hour: no refresh in these tests unless one asks for it (no message arrives but for the events here).
        node.start(b -> b.healthStream(true).healthRefresh(Duration.ofHours(1)));
        node.plugin.awaitChecks();
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
    void everyDeviceIsUnknownUntilThePluginsFirstHealthCheck() throws Exception {
        node.stop();
        Instant before = Instant.now();
        // No snapshot at start: the first one comes with apply, and its list goes out before any check is back.
        node.start(b -> DraPlugin.builder(dev.vgpu.attach.Handovers.forHost(node.host.host(), node.sources),
                ref -> new ClaimReader.Unavailable("none")).pool(DraHarness.POOL).kubeletRoot(tmp.resolve("kubelet"))
                .cdiDir(node.cdiDir()).stateDir(tmp.resolve("state")).hostRoot(node.host.root())
                .checkEvery(Duration.ofHours(1)).healthStream(true).healthRefresh(Duration.ofHours(1)));
        var watch = node.kubelet.watchHealth(node.plugin.draSocket());
        assertThat(watch.next().getDevicesList()).as("no devices before the first snapshot").isEmpty();

        node.plugin.apply(node.snapshot, Reconciler.plan(Snapshot.empty(), node.snapshot));

        NodeWatchResourcesResponse first = watch.next();
        Map<String, HealthStatus> unknown = new TreeMap<>();
        ALL.forEach(name -> unknown.put(name, HealthStatus.UNKNOWN));
        assertThat(health(first)).isEqualTo(unknown);
        assertThat(first.getDevicesList()).extracting(d -> d.getDevice().getDeviceName()).isSorted();
        assertThat(first.getDevices(0).getLastUpdatedTime())
                .isBetween(before.getEpochSecond(), Instant.now().getEpochSecond());
        assertThat(first.getDevicesList()).allMatch(d -> d.getMessage().equals(HealthStreams.UNKNOWN_MESSAGE));
        node.plugin.awaitChecks();
        assertThat(health(watch.next())).isEqualTo(allHealthyBut());
    }

    @Test
    void aStreamGetsEveryDeviceAtOnceThenEachChangeOfTheVerdicts() throws Exception {
        var watch = node.kubelet.watchHealth(node.plugin.draSocket());
        assertThat(health(watch.next())).isEqualTo(allHealthyBut());

        node.host.removeGroupNode(100);
        node.plugin.awaitChecks();
        NodeWatchResourcesResponse second = watch.next();
        assertThat(second.getDevicesList()).filteredOn(d -> d.getHealth() == HealthStatus.HEALTHY)
                .hasSize(ALL.size() - 1).allMatch(d -> d.getMessage().isEmpty());
        assertThat(health(second)).isEqualTo(allHealthyBut(DraHarness.VF));
        DeviceHealth vf = second.getDevicesList().stream()
                .filter(d -> d.getDevice().getDeviceName().equals(DraHarness.VF)).findFirst().orElseThrow();
        assertThat(vf.getMessage()).isEqualTo("/dev/vfio/100 is gone");

        node.plugin.awaitChecks();  // the same verdicts: no message
        node.host.addGroupNode(100);
        node.plugin.awaitChecks();
        assertThat(health(watch.next())).isEqualTo(allHealthyBut());
        node.plugin.markGpuUnhealthy(PciAddress.parse("0000:41:00.0"), OptionalInt.empty(), "critical XID 79");
        node.plugin.awaitChecks();
        NodeWatchResourcesResponse third = watch.next();
        assertThat(health(third)).isEqualTo(allHealthyBut(DraHarness.GPU));
        assertThat(third.getDevicesList()).filteredOn(d -> d.getHealth() == HealthStatus.UNHEALTHY)
                .singleElement().extracting(DeviceHealth::getMessage).isEqualTo("its GPU reported a critical XID");
    }

    @Test
    void aReasonIsCutToWhatTheKubeletKeepsAndAnEmptyOneGetsTheGenericMessage() {
        assertThat(HealthStreams.message("x".repeat(5000))).hasSize(1024).startsWith("xxx").endsWith("...");
        // A cut never splits a surrogate pair.
        assertThat(HealthStreams.message("x".repeat(1020) + "\uD83D\uDE00" + "y".repeat(10)))
                .isEqualTo("x".repeat(1020) + "...");
        assertThat(HealthStreams.message("")).isEqualTo(HealthStreams.UNHEALTHY_MESSAGE);
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
        node.host.removeGroupNode(101);
        node.plugin.awaitChecks();
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
        node.host.removeGroupNode(41);
        node.plugin.awaitChecks();

        assertThat(health(second.next())).isEqualTo(allHealthyBut(DraHarness.GPU));
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30))
                .until(() -> node.plugin.status().healthStreams() == 1);
    }

    @Test
    void anUnchangedListIsSentAgainWithoutAnyChange() throws Exception {
        assertThat(DraPlugin.HEALTH_REFRESH).as("inside the kubelet's 30 s").isLessThan(Duration.ofSeconds(30));
        node.stop();
        node.start(b -> b.healthStream(true).healthRefresh(Duration.ofMillis(20)));
        node.plugin.awaitChecks();
        var watch = node.kubelet.watchHealth(node.plugin.draSocket());

        for (int i = 0; i < 3; i++) {
            assertThat(health(watch.next())).isEqualTo(allHealthyBut());
        }
    }

    @Test
    void closingThePluginEndsTheStreamsAndEveryThreadItMade() throws Exception {
        var watch = node.kubelet.watchHealth(node.plugin.draSocket());
        watch.next();

        node.plugin.close();

        assertThat(watch.completed()).as("the stream ended normally").isTrue();
        // Every thread came from the factory: two scheduler threads, the read thread (started by a read only), the
        // transport's event loop and call threads (started by calls), the directory watch.
        assertThat(node.threads.made()).isGreaterThanOrEqualTo(4);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(node.threads.aliveNames()).as("threads left").isEmpty());
        node.start(); // for stop(): a plugin without the health stream
        assertThat(node.kubelet.getInfo(node.plugin.registrationSocket()).getSupportedVersionsList())
                .containsExactly("v1.DRAPlugin", "v1beta1.DRAPlugin");
    }
}
