package dev.vgpu.dra.apiserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.dra.DevicePool;
import dev.vgpu.dra.DriverName;
import dev.vgpu.dra.SliceDevice;
import dev.vgpu.dra.SliceSpec;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link SlicePublisher} against fabric8's mock API server in CRUD mode: what it creates, updates, deletes and
 * recreates, the pool's generation, the owner reference and health taints. Waits use Awaitility on what the server
 * holds, never a sleep.
 */
@EnableKubernetesMockClient(crud = true)
class SlicePublisherTest {

    static final Duration WAIT = Duration.ofSeconds(20);

    KubernetesClient client;
    @TempDir
    Path tmp;
    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    static String node(KubernetesClient client, String name) {
        Node node = client.resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
        return node.getMetadata().getUid();
    }

    /** Without the watch: fabric8's mock server answers watches on websockets only (SliceWatchTest has its own). */
    private SlicePublisher publisher(Duration checkEvery) {
        return publisher(checkEvery, false);
    }

    private SlicePublisher publisher(Duration checkEvery, boolean watch) {
        SlicePublisher p = SlicePublisher.builder(ApiServer.of(client), DriverName.DEFAULT, "node-a")
                .checkEvery(checkEvery).clock(Clock.fixed(Instant.parse("2026-03-01T10:00:00Z"), ZoneOffset.UTC))
                .watch(watch).start();
        closing.add(p);
        return p;
    }

    /** The pool before its first health check: the taints already published stand. */
    static DevicePool unchecked(Snapshot snapshot) {
        return new DevicePool(snapshot, Optional.empty());
    }

    /** The pool with exactly these devices unhealthy. */
    static DevicePool unhealthy(Snapshot snapshot, String... ids) {
        Map<String, String> verdicts = new TreeMap<>();
        for (String id : ids) {
            verdicts.put(id, "/dev/vfio/x is gone");
        }
        return new DevicePool(snapshot, Optional.of(verdicts));
    }

    static List<ResourceSlice> slices(KubernetesClient client) {
        List<ResourceSlice> all = new ArrayList<>(client.resources(ResourceSlice.class).list().getItems());
        all.sort(Comparator.comparing(s -> s.getSpec().getDevices().isEmpty() ? ""
                : s.getSpec().getDevices().get(0).getName()));
        return all;
    }

    private List<ResourceSlice> awaitSlices(Predicate<List<ResourceSlice>> until) {
        return await().atMost(WAIT).until(() -> slices(client), until::test);
    }

    /** {@code count} VFs of one profile on consecutive functions. */
    static Snapshot vfs(int count) {
        List<Device> devices = new ArrayList<>();
        ResourceName name = new ResourceName("NVIDIA_H200X-1-18C");
        for (int i = 0; i < count; i++) {
            int bus = 0x40 + i / 16;
            devices.add(Device.builder(new PciAddress(0, bus, 1 + (i % 16) / 8, i % 8).toString(), name,
                    "vendor-vfio", Attachment.VFIO_PCI).parent(new PciAddress(0, bus, 0, 0))
                    .iommuGroup(Integer.toString(100 + i)).build());
        }
        return Snapshot.builder().add("vendor-vfio", new Discovery(devices, List.of())).build();
    }

    static List<String> names(List<ResourceSlice> slices) {
        return slices.stream().flatMap(s -> s.getSpec().getDevices().stream()).map(d -> d.getName()).toList();
    }

    static long generation(ResourceSlice s) {
        return s.getSpec().getPool().getGeneration();
    }

    @Test
    void theScannedNodeIsOneSliceOwnedByTheNodeAtGenerationOne() {
        String uid = node(client, "node-a");
        {
            publisher(Duration.ofMinutes(10)).publish(unchecked(ScannedNode.snapshot(tmp)));

            ResourceSlice slice = awaitSlices(l -> l.size() == 1).get(0);

            assertThat(slice.getMetadata().getName()).startsWith("node-a-gpu.vgpu.dev-");
            assertThat(slice.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
                assertThat(o.getKind()).isEqualTo("Node");
                assertThat(o.getApiVersion()).isEqualTo("v1");
                assertThat(o.getName()).isEqualTo("node-a");
                assertThat(o.getUid()).isEqualTo(uid);
                assertThat(o.getController()).isTrue();
            });
            assertThat(slice.getSpec().getDriver()).isEqualTo("gpu.vgpu.dev");
            assertThat(slice.getSpec().getNodeName()).isEqualTo("node-a");
            assertThat(slice.getSpec().getPool().getName()).isEqualTo("node-a");
            assertThat(slice.getSpec().getPool().getGeneration()).isEqualTo(1);
            assertThat(slice.getSpec().getPool().getResourceSliceCount()).isEqualTo(1);
            assertThat(names(List.of(slice))).containsExactly(ScannedNode.MDEV, ScannedNode.VF, ScannedNode.VF2,
                    ScannedNode.GPU);
            assertThat(slice.getSpec().getDevices().get(1).getAttributes().get("profile").getString())
                    .isEqualTo("NVIDIA L40S-1Q");
            SliceObjectRules.assertValid(List.of(slice));
        }
    }

    @Test
    void oneChangedSliceIsUpdatedAtTheSameGenerationAndAddedOrRemovedSlicesRaiseIt() {
        node(client, "node-a");
        SlicePublisher p = publisher(Duration.ofMinutes(10));

        p.publish(unchecked(vfs(300)));
        List<ResourceSlice> three = awaitSlices(l -> l.size() == 3);
        assertThat(three).extracting(s -> s.getSpec().getDevices().size()).containsExactly(128, 128, 44);
        assertThat(three).allSatisfy(s -> assertThat(generation(s)).isEqualTo(1));
        SliceObjectRules.assertValid(three);

        p.publish(unchecked(vfs(299)));
        List<ResourceSlice> updated = awaitSlices(l -> l.size() == 3 && l.get(2).getSpec().getDevices().size() == 43);
        assertThat(updated).allSatisfy(s -> assertThat(generation(s)).isEqualTo(1));
        assertThat(updated.get(0).getMetadata().getResourceVersion())
                .isEqualTo(three.get(0).getMetadata().getResourceVersion());

        p.publish(unchecked(vfs(400)));
        List<ResourceSlice> four = awaitSlices(l -> l.size() == 4 && l.stream().allMatch(s -> generation(s) == 2));
        assertThat(four).allSatisfy(s -> assertThat(s.getSpec().getPool().getResourceSliceCount()).isEqualTo(4));
        assertThat(names(four)).hasSize(400).doesNotHaveDuplicates();

        p.publish(unchecked(vfs(100)));
        List<ResourceSlice> one = awaitSlices(l -> l.size() == 1 && generation(l.get(0)) == 3);
        assertThat(one.get(0).getSpec().getPool().getResourceSliceCount()).isEqualTo(1);
        assertThat(names(one)).hasSize(100);
        await().atMost(WAIT).until(() -> p.status().generation() == 3 && p.status().slices() == 1);
    }

    @Test
    void slicesDeletedBehindItsBackAreRecreatedByThePeriodicCheck() {
        node(client, "node-a");
        // No watch: only the periodic check can bring the slice back.
        SlicePublisher p = publisher(Duration.ofMillis(200), false);
        p.publish(unchecked(vfs(3)));
        ResourceSlice first = awaitSlices(l -> l.size() == 1).get(0);

        client.resource(first).delete();

        assertThat(names(awaitSlices(l -> l.size() == 1 && !l.get(0).getMetadata().getName()
                .equals(first.getMetadata().getName())))).hasSize(3);
    }

    @Test
    void unhealthyDevicesAreTaintedNoScheduleAndTaintedPoolsHaveAtMost64ASlice() {
        node(client, "node-a");
        SlicePublisher p = publisher(Duration.ofMinutes(10));
        Snapshot snapshot = vfs(100);
        p.publish(unchecked(snapshot));
        awaitSlices(l -> l.size() == 1);

        p.publish(unhealthy(snapshot, "0000:40:01.0"));

        List<ResourceSlice> tainted = awaitSlices(l -> l.size() == 2);
        assertThat(tainted).extracting(s -> s.getSpec().getDevices().size()).containsExactly(64, 36);
        var device = tainted.get(0).getSpec().getDevices().stream().filter(d -> d.getName().equals("pci-0000-40-01-0"))
                .findFirst().orElseThrow();
        assertThat(device.getTaints()).singleElement().satisfies(t -> {
            assertThat(t.getKey()).isEqualTo("gpu.vgpu.dev/unhealthy");
            assertThat(t.getEffect()).isEqualTo("NoSchedule");
            assertThat(t.getTimeAdded()).isEqualTo("2026-03-01T10:00:00Z");
        });
        assertThat(tainted.stream().flatMap(s -> s.getSpec().getDevices().stream())
                .filter(d -> d.getTaints() != null && !d.getTaints().isEmpty()).count()).isEqualTo(1);
        SliceObjectRules.assertValid(tainted);

        p.publish(unhealthy(snapshot));
        assertThat(awaitSlices(l -> l.size() == 1).get(0).getSpec().getDevices())
                .allSatisfy(d -> assertThat(d.getTaints()).isNullOrEmpty());
    }

    @Test
    void aRestartedPublisherKeepsPublishedTaintsAndTheirTimesUntilItsFirstVerdict() throws Exception {
        node(client, "node-a");
        SlicePublisher first = SlicePublisher.builder(ApiServer.of(client), DriverName.DEFAULT, "node-a")
                .checkEvery(Duration.ofMinutes(10)).watch(false)
                .clock(Clock.fixed(Instant.parse("2026-03-01T10:00:00Z"), ZoneOffset.UTC)).start();
        first.publish(unhealthy(vfs(100), "0000:40:01.0"));
        awaitSlices(l -> l.size() == 2);
        first.close();

        // The next daemon, with a later clock: its first round comes before its first health verdict and keeps the
        // published taint, time and all.
        SlicePublisher second = SlicePublisher.builder(ApiServer.of(client), DriverName.DEFAULT, "node-a")
                .checkEvery(Duration.ofMinutes(10)).watch(false)
                .clock(Clock.fixed(Instant.parse("2026-03-01T11:30:00Z"), ZoneOffset.UTC)).start();
        closing.add(second);
        second.publish(unchecked(vfs(100)));
        await().atMost(WAIT).until(() -> second.status().slices() == 2);
        assertThat(taintTimes(slices(client))).containsExactly(Map.entry("pci-0000-40-01-0", "2026-03-01T10:00:00Z"));
        assertThat(second.watchOpen()).as("built without a watch").isFalse();

        // Its verdict: the same fault, and a new one on a device of the same slice, so that slice is rewritten.
        second.publish(unhealthy(vfs(100), "0000:40:01.0", "0000:40:01.1"));

        assertThat(taintTimes(awaitSlices(l -> taintTimes(l).size() == 2))).containsExactly(
                Map.entry("pci-0000-40-01-0", "2026-03-01T10:00:00Z"),
                Map.entry("pci-0000-40-01-1", "2026-03-01T11:30:00Z"));

        // A verdict without the fault untaints it.
        second.publish(unhealthy(vfs(100), "0000:40:01.1"));
        assertThat(taintTimes(awaitSlices(l -> taintTimes(l).size() == 1)))
                .containsExactly(Map.entry("pci-0000-40-01-1", "2026-03-01T11:30:00Z"));
    }

    /** Tainted device name → its taint's timeAdded, sorted by name. */
    static Map<String, String> taintTimes(List<ResourceSlice> slices) {
        Map<String, String> times = new TreeMap<>();
        slices.stream().flatMap(s -> s.getSpec().getDevices().stream())
                .filter(d -> d.getTaints() != null && !d.getTaints().isEmpty())
                .forEach(d -> times.put(d.getName(), d.getTaints().get(0).getTimeAdded()));
        return times;
    }

    @Test
    void otherDriversAndNodesSlicesAreLeftAlone() {
        node(client, "node-a");
        ResourceSlice foreign = SliceObjects.toObject(new SliceSpec(new DriverName("net.example.com"), "node-a", 4,
                1, "node-a", List.of(new SliceDevice("eth0", java.util.Map.of()))), "x", null, n -> null);
        ResourceSlice otherNode = SliceObjects.toObject(new SliceSpec(DriverName.DEFAULT, "node-b", 2, 1, "node-b",
                List.of(new SliceDevice("pci-0000-99-00-0", java.util.Map.of()))), "y", null, n -> null);
        client.resource(foreign).create();
        client.resource(otherNode).create();
        SlicePublisher p = publisher(Duration.ofMinutes(10));

        p.publish(unchecked(vfs(2)));

        // The round has ended (its own slice written) before the others are looked at.
        await().atMost(WAIT).until(() -> p.status().slices() == 1);
        List<ResourceSlice> all = awaitSlices(l -> l.size() == 3);
        assertThat(all).filteredOn(s -> s.getSpec().getDriver().equals("net.example.com")).singleElement()
                .satisfies(s -> assertThat(generation(s)).isEqualTo(4));
        assertThat(all).filteredOn(s -> s.getSpec().getNodeName().equals("node-b")).singleElement()
                .satisfies(s -> assertThat(generation(s)).isEqualTo(2));
    }

    @Test
    void aMissingNodeIsAFailureInWordsRetriedUntilTheNodeExists() {
        SlicePublisher p = publisher(Duration.ofMinutes(10));
        p.publish(unchecked(vfs(2)));

        await().atMost(WAIT).until(() -> p.status().failure() != null);
        assertThat(p.status().failure()).isEqualTo("node node-a does not exist in the API server");
        assertThat(slices(client)).isEmpty();

        node(client, "node-a");
        assertThat(awaitSlices(l -> l.size() == 1)).singleElement()
                .satisfies(s -> assertThat(names(List.of(s))).hasSize(2));
        await().atMost(WAIT).until(() -> p.status().failure() == null);
    }
}
