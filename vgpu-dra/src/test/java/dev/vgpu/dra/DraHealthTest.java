package dev.vgpu.dra;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Reconciler;
import dev.vgpu.core.Snapshot;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DRA mode's health, owned by the plugin, on the harness's real-layout host tree: a removed VFIO group node, a VF
 * reconfigured to another profile and an XID (with the device plugin's policy: the GPU's VFs and mdevs, GPU-instance
 * scoping) each make exactly their devices unhealthy in the pool the slice publisher is told, and undoing the host
 * change makes them healthy again. Checks run when the test asks ({@link DraPlugin#awaitChecks}), which returns once
 * the round is back: the test never waits for time.
 */
class DraHealthTest {

    static final String PASSTHROUGH = "0000:41:00.0";
    static final String PF = "0000:1b:00.0";
    static final String VF4 = "0000:1b:00.4";
    static final String VF5 = "0000:1b:00.5";
    static final String UUID = DraHarness.UUID;

    @TempDir
    Path tmp;
    DraHarness h;

    @BeforeEach
    void start() {
        h = new DraHarness(tmp);
    }

    @AfterEach
    void stop() {
        h.close();
    }

    private Set<String> unhealthy() throws InterruptedException {
        h.plugin.awaitChecks();
        return Set.copyOf(h.plugin.status().unhealthyIds());
    }

    /** The verdicts the pool listener was told, in order, a verdict repeated at once counted once. */
    private List<Map<String, String>> told() {
        List<Map<String, String>> out = new java.util.ArrayList<>();
        h.pools.stream().filter(DevicePool::checked).map(p -> p.verdicts().orElseThrow()).forEach(v -> {
            if (out.isEmpty() || !out.get(out.size() - 1).equals(v)) {
                out.add(v);
            }
        });
        return out;
    }

    @Test
    void everyDeviceStartsHealthyAndThePoolIsToldItsFirstVerdictOnce() throws Exception {
        assertThat(unhealthy()).isEmpty();
        h.plugin.awaitChecks();
        assertThat(h.pools.stream().filter(DevicePool::checked)).hasSize(1);
        assertThat(told()).containsExactly(Map.of());
    }

    @Test
    void nothingIsToldBeforeTheFirstSnapshotNotEvenAnXid() throws Exception {
        h.stop();
        h.pools.clear();
        h.start(b -> DraPlugin.builder(dev.vgpu.attach.Handovers.forHost(h.host.host(), h.sources),
                ref -> new ClaimReader.Unavailable("none")).pool(DraHarness.POOL).kubeletRoot(tmp.resolve("kubelet"))
                .cdiDir(h.cdiDir()).stateDir(tmp.resolve("state")).hostRoot(h.host.root())
                .devicePool(h.pools::add).checkEvery(java.time.Duration.ofHours(1)));
        h.plugin.markGpuUnhealthy(PciAddress.parse(PASSTHROUGH), OptionalInt.empty(), "XID 79");
        h.plugin.awaitChecks(); // the timer firing before a slow first scan

        assertThat(h.pools).as("no pool before the first snapshot").isEmpty();
        assertThat(h.plugin.status().unhealthyIds()).isEmpty();

        Snapshot first = h.scan();
        h.plugin.apply(first, Reconciler.plan(Snapshot.empty(), first));
        h.plugin.awaitChecks();
        assertThat(h.pools).filteredOn(DevicePool::checked).first().extracting(p -> p.verdicts().orElseThrow())
                .isEqualTo(Map.of(PASSTHROUGH, "its GPU reported a critical XID"));
        assertThat(h.pools).allSatisfy(p -> assertThat(p.snapshot()).isEqualTo(first));
    }

    @Test
    void aGoneGroupNodeOrAReconfiguredVfIsUnhealthyUntilTheHostIsBack() throws Exception {
        assertThat(unhealthy()).isEmpty(); // the first verdict, before the host changes
        h.host.removeGroupNode(41).configureVf(VF5, 1155);
        assertThat(unhealthy()).containsExactlyInAnyOrder(PASSTHROUGH, VF5);

        h.host.addGroupNode(41).configureVf(VF5, 1152);
        assertThat(unhealthy()).isEmpty();
        // A check the directory watch starts may run between two of the test's changes and tell a state with one of
        // the two devices: every state told lies between healthy and both unhealthy, in that order and back.
        List<Map<String, String>> told = told();
        assertThat(told.get(0)).isEmpty();
        assertThat(told.get(told.size() - 1)).isEmpty();
        assertThat(told).allSatisfy(v -> assertThat(v.keySet()).isSubsetOf(PASSTHROUGH, VF5));
        Map<String, String> both = told.stream().filter(v -> v.size() == 2).findFirst().orElseThrow();
        assertThat(both.get(PASSTHROUGH)).isEqualTo("/dev/vfio/41 is gone");
        assertThat(both.get(VF5)).startsWith("device " + VF5 + " was ").contains("when advertised and is now");
    }

    @Test
    void anXidMarksItsGpuAndEveryDeviceOnItButNoOther() throws Exception {
        h.plugin.markGpuUnhealthy(PciAddress.parse(PF), OptionalInt.empty(), "critical XID 79");
        assertThat(unhealthy()).containsExactlyInAnyOrder(VF4, VF5);

        h.plugin.markGpuUnhealthy(PciAddress.parse("0000:06:00.0"), OptionalInt.empty(), "critical XID 48");
        assertThat(unhealthy()).as("a host check does not clear an XID").containsExactlyInAnyOrder(VF4, VF5, UUID);
        assertThat(told().get(told().size() - 1)).containsEntry(UUID, "its GPU reported a critical XID");

        // Every reason that holds is told, in the device plugin's words and order.
        h.host.removeGroupNode(100);
        h.plugin.awaitChecks();
        assertThat(told().get(told().size() - 1)).containsEntry(VF4, "/dev/vfio/100 is gone; its GPU reported a"
                + " critical XID").containsEntry(VF5, "its GPU reported a critical XID");
    }

    @Test
    void anXidOfOneGpuInstanceMarksOnlyTheVfsOnIt() throws Exception {
        h.host.writeFile("sys/bus/pci/devices/" + VF4 + "/nvidia/gpu_instance_id", "1\n");
        h.host.writeFile("sys/bus/pci/devices/" + VF5 + "/nvidia/gpu_instance_id", "2\n");
        Snapshot next = h.scan();
        h.plugin.apply(next, Reconciler.plan(h.snapshot, next));

        h.plugin.markGpuUnhealthy(PciAddress.parse(PF), OptionalInt.of(2), "critical XID 79");

        assertThat(unhealthy()).containsExactly(VF5);
    }
}
