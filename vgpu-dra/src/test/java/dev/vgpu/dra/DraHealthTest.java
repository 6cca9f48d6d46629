package dev.vgpu.dra;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.attach.GpuFaults;
import dev.vgpu.attach.Handovers;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.sysfs.MdevSource;
import dev.vgpu.sysfs.PassthroughSource;
import dev.vgpu.sysfs.VendorVfioSource;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DRA mode's health on a real-layout host tree: a removed VFIO group node, a VF reconfigured to another profile and
 * an XID (with the device plugin's policy: the GPU's VFs and mdevs, GPU-instance scoping) each make exactly their
 * devices unhealthy in the set the slice publisher gets, and undoing the host change makes them healthy again. The
 * checks run when the test asks ({@link DraHealth#checkNow}); the test waits for the health thread to be idle, never
 * for time.
 */
class DraHealthTest {

    static final String PASSTHROUGH = "0000:41:00.0";
    static final String PF = "0000:1b:00.0";
    static final String VF4 = "0000:1b:00.4";
    static final String VF5 = "0000:1b:00.5";
    static final String UUID = "aa618089-8b16-4d01-a136-25a0f3c73123";

    @TempDir
    Path tmp;
    SysfsTree host;
    DraHealth health;
    /** Every verdict (id → why) the publisher was told, in order; written by the health thread. */
    final List<Map<String, String>> told = new CopyOnWriteArrayList<>();
    final List<DeviceSource> sources = List.of(new PassthroughSource(), new MdevSource(), new VendorVfioSource());

    @BeforeEach
    void start() throws Exception {
        host = SysfsTree.at(tmp.resolve("host"));
        host.passthroughGpu(PASSTHROUGH, 0x2331).iommuGroup(41).create();
        host.sriovCard(PF, 0x26b9).virtualFunctions(2, 100)
                .catalog(Map.of(1152L, "NVIDIA L40S-1Q", 1155L, "NVIDIA L40S-4Q")).create();
        host.configureVf(VF4, 1152).configureVf(VF5, 1152);
        host.nvidiaGpu("0000:06:00.0", 0x1eb8).create();
        host.mdev(UUID, "0000:06:00.0", "nvidia-222", "GRID T4-1Q", 7);
        host.addGroupNode(41).addGroupNode(100).addGroupNode(101).addGroupNode(7);
        health = new DraHealth(Handovers.forHost(host.host(), sources), host.root(), GpuFaults.Probe.TRUSTING,
                Duration.ZERO, told::add);
        health.apply(scan());
        health.awaitIdle();
    }

    @AfterEach
    void stop() {
        health.close();
    }

    private Snapshot scan() {
        return new Scanner(host.host(), sources).run(Snapshot.empty()).snapshot();
    }

    private Set<String> unhealthy() throws InterruptedException {
        health.awaitIdle();
        return Set.copyOf(health.unhealthyIds());
    }

    @Test
    void everyDeviceStartsHealthyAndTheFirstSetIsToldOnce() throws Exception {
        assertThat(unhealthy()).isEmpty();
        health.checkNow();
        health.awaitIdle();
        assertThat(told).containsExactly(Map.of());
    }

    @Test
    void nothingIsToldBeforeTheFirstSnapshotNotEvenAnXid() throws Exception {
        List<Map<String, String>> early = new CopyOnWriteArrayList<>();
        try (DraHealth fresh = new DraHealth(Handovers.forHost(host.host(), sources), host.root(),
                GpuFaults.Probe.TRUSTING, Duration.ZERO, early::add)) {
            fresh.checkNow(); // the timer firing before a slow first scan
            fresh.markGpuUnhealthy(PciAddress.parse(PASSTHROUGH), OptionalInt.empty(), "XID 79");
            fresh.awaitIdle();
            assertThat(early).as("no verdict before the first snapshot").isEmpty();
            assertThat(fresh.unhealthyIds()).isEmpty();

            fresh.apply(scan());
            fresh.awaitIdle();
            assertThat(early).containsExactly(Map.of(PASSTHROUGH, "its GPU reported a critical XID"));
        }
    }

    @Test
    void aGoneGroupNodeOrAReconfiguredVfIsUnhealthyUntilTheHostIsBack() throws Exception {
        host.removeGroupNode(41).configureVf(VF5, 1155);
        health.checkNow();
        assertThat(unhealthy()).containsExactlyInAnyOrder(PASSTHROUGH, VF5);

        host.addGroupNode(41).configureVf(VF5, 1152);
        health.checkNow();
        assertThat(unhealthy()).isEmpty();
        assertThat(told).extracting(Map::keySet).containsExactly(Set.of(), Set.of(PASSTHROUGH, VF5), Set.of());
        assertThat(told.get(1).get(PASSTHROUGH)).isEqualTo("/dev/vfio/41 is gone");
        assertThat(told.get(1).get(VF5)).startsWith("device " + VF5 + " was ").contains("when advertised and is now");
    }

    @Test
    void anXidMarksItsGpuAndEveryDeviceOnItButNoOther() throws Exception {
        health.markGpuUnhealthy(PciAddress.parse(PF), OptionalInt.empty(), "critical XID 79");
        assertThat(unhealthy()).containsExactlyInAnyOrder(VF4, VF5);

        health.markGpuUnhealthy(PciAddress.parse("0000:06:00.0"), OptionalInt.empty(), "critical XID 48");
        assertThat(unhealthy()).containsExactlyInAnyOrder(VF4, VF5, UUID);

        health.checkNow();
        assertThat(unhealthy()).as("a host check does not clear an XID").containsExactlyInAnyOrder(VF4, VF5, UUID);
        assertThat(told.get(told.size() - 1)).containsEntry(UUID, "its GPU reported a critical XID");

        // Every reason that holds is told, in the device plugin's words and order.
        host.removeGroupNode(100);
        health.checkNow();
        health.awaitIdle();
        assertThat(told.get(told.size() - 1)).containsEntry(VF4, "/dev/vfio/100 is gone; its GPU reported a critical"
                + " XID").containsEntry(VF5, "its GPU reported a critical XID");
    }

    @Test
    void anXidOfOneGpuInstanceMarksOnlyTheVfsOnIt() throws Exception {
        host.writeFile("sys/bus/pci/devices/" + VF4 + "/nvidia/gpu_instance_id", "1\n");
        host.writeFile("sys/bus/pci/devices/" + VF5 + "/nvidia/gpu_instance_id", "2\n");
        health.apply(scan());

        health.markGpuUnhealthy(PciAddress.parse(PF), OptionalInt.of(2), "critical XID 79");

        assertThat(unhealthy()).containsExactly(VF5);
    }
}
