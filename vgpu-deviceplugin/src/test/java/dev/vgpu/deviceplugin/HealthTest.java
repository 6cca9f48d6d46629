package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.L40S_1Q;
import static dev.vgpu.deviceplugin.Fixtures.T4_1Q;
import static dev.vgpu.deviceplugin.Fixtures.mdev;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static dev.vgpu.deviceplugin.Fixtures.vf;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.PciAddress;
import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import dev.vgpu.testsupport.CapturedStderr;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Health: the VFIO group node's presence (watched and polled) and GPU faults fed by the XID hook. */
@Tag("reliability")
class HealthTest {

    private static final String UUID = "aa618089-8b16-4d01-a136-25a0f3c73123";

    @TempDir
    Path tmp;

    @Test
    void groupNodeThatDisappearsAndComesBackFlipsHealthThroughTheDirectoryWatch() {
        try (Harness h = Harness.watchOnly(tmp)) {
            h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
            h.host.passthroughGpu("0000:42:00.0", 0x2335).iommuGroup(42).numa(0).create();
            h.host.addGroupNode(41).addGroupNode(42);
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0), passthrough("0000:42:00.0", 42, 0)));
            h.await(k -> health(k, H200.fullName()).equals(Map.of("0000:41:00.0", true, "0000:42:00.0", true)));

            h.host.removeGroupNode(41);
            h.await(k -> health(k, H200.fullName()).equals(Map.of("0000:41:00.0", false, "0000:42:00.0", true)));

            h.host.addGroupNode(41);
            h.await(k -> health(k, H200.fullName()).equals(Map.of("0000:41:00.0", true, "0000:42:00.0", true)));
        }
    }

    @Test
    void anUnhealthyDeviceIsLoggedInWordsNotAsARecord() {
        try (Harness h = Harness.watchOnly(tmp)) {
            h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
            h.host.addGroupNode(41);
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));
            h.await(k -> health(k, H200.fullName()).equals(Map.of("0000:41:00.0", true)));

            String log = CapturedStderr.of(() -> {
                h.host.removeGroupNode(41);
                h.await(k -> health(k, H200.fullName()).equals(Map.of("0000:41:00.0", false)));
            });

            assertThat(log).contains("Device 0000:41:00.0 of " + H200.fullName() + " is unhealthy: /dev/vfio/41 is gone")
                    .doesNotContain("DeviceHealth[");
        }
    }

    @Test
    void thePeriodicCheckFindsNodesThatNoWatchReported() {
        try (Harness h = Harness.start(tmp)) {
            h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
            h.host.delete("dev/vfio");
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));
            h.await(k -> health(k, H200.fullName()).equals(Map.of("0000:41:00.0", false)));

            // dev/ itself is not watched: only the poll can see this directory appear with its node.
            h.host.addGroupNode(41);

            h.await(k -> health(k, H200.fullName()).equals(Map.of("0000:41:00.0", true)));
        }
    }

    @Test
    void gpuFaultMarksTheDevicesOnThatGpuUntilCleared() {
        try (Harness h = Harness.start(tmp)) {
            h.host.addGroupNode(41).addGroupNode(100).addGroupNode(101).addGroupNode(7);
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0),
                    vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0", 100, 0),
                    vf(L40S_1Q, "0000:1c:00.4", "0000:1c:00.0", 101, 0),
                    mdev(UUID, "0000:06:00.0", 7, 0)));
            h.await(k -> k.resources().size() == 3);

            h.manager.markGpuUnhealthy(PciAddress.parse("0000:1b:00.0"), "XID 79");
            h.manager.markGpuUnhealthy(PciAddress.parse("0000:41:00.0"), "XID 48");
            h.manager.markGpuUnhealthy(PciAddress.parse("0000:06:00.0"), "XID 62");

            h.await(k -> health(k, L40S_1Q.fullName()).equals(Map.of("0000:1b:00.4", false, "0000:1c:00.4", true))
                    && health(k, H200.fullName()).equals(Map.of("0000:41:00.0", false))
                    && health(k, T4_1Q.fullName()).equals(Map.of(UUID, false)));

            h.manager.markGpuHealthy(PciAddress.parse("0000:1b:00.0"));
            h.await(k -> health(k, L40S_1Q.fullName()).equals(Map.of("0000:1b:00.4", true, "0000:1c:00.4", true)));
            assertThat(health(h.kubelet, H200.fullName())).containsEntry("0000:41:00.0", false);
        }
    }

    @Test
    void aGpuFaultReachesMdevsWhoseParentIsAVfOfThatGpu() {
        // Ampere SR-IOV mdev hosts: the mdev's parent is a VF, while NVML (and so the XID hook) names the PF.
        try (Harness h = Harness.start(tmp)) {
            h.host.sriovCard("0000:08:00.0", 0x20b5).numa(0).virtualFunctions(2, 60).create();
            String vf = SysfsTree.vfAddress("0000:08:00.0", 1);
            h.host.mdev(UUID, vf, "nvidia-471", "GRID T4-1Q", 7);
            h.apply(snapshot(mdev(UUID, vf, 7, 0)));
            h.await(k -> health(k, T4_1Q.fullName()).equals(Map.of(UUID, true)));

            h.manager.markGpuUnhealthy(PciAddress.parse("0000:08:00.0"), "XID 79");
            h.await(k -> health(k, T4_1Q.fullName()).equals(Map.of(UUID, false)));

            h.manager.markGpuHealthy(PciAddress.parse("0000:08:00.0"));
            h.await(k -> health(k, T4_1Q.fullName()).equals(Map.of(UUID, true)));
        }
    }

    @Test
    void aDeviceAddedOnAFaultyGpuStartsUnhealthyOthersHealthy() {
        try (Harness h = Harness.start(tmp)) {
            h.host.addGroupNode(100).addGroupNode(101).addGroupNode(102);
            h.apply(snapshot(vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0", 100, 0)));
            h.await(k -> k.resources().containsKey(L40S_1Q.fullName()));
            h.manager.markGpuUnhealthy(PciAddress.parse("0000:1b:00.0"), "XID 79");

            h.apply(snapshot(vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0", 100, 0),
                    vf(L40S_1Q, "0000:1b:00.5", "0000:1b:00.0", 101, 0),
                    vf(L40S_1Q, "0000:1c:00.4", "0000:1c:00.0", 102, 0)));

            h.await(k -> health(k, L40S_1Q.fullName()).equals(Map.of("0000:1b:00.4", false, "0000:1b:00.5", false,
                    "0000:1c:00.4", true)));
        }
    }

    private static Map<String, Boolean> health(StandInKubelet kubelet, String resource) {
        return kubelet.resources().getOrDefault(resource, java.util.List.of()).stream()
                .collect(Collectors.toMap(DeviceState::id, DeviceState::healthy));
    }
}
