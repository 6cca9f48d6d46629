package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.Discovery;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The passthrough and mdev scenarios of the issue, on any file system. */
abstract class PassthroughAndMdevContract extends SourceTestBase {

    static final String UUID1 = "aa618089-8b16-4d01-a136-25a0f3c73123";
    static final String UUID2 = "0b8e1f4c-9a3d-4c5e-8f21-7d6a5b4c3d2e";
    static final String UUID3 = "f00dcafe-0000-4000-8000-000000000003";

    /**
     * An H200 (with its audio function, both on vfio-pci as a viable group needs) and a GH200 on VFIO drivers amid
     * other vendors' functions and an NVIDIA GPU on nvidia.
     */
    void passthroughHost() {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).vfioCdev("vfio3").create();
        tree.function("0000:41:00.1", 0x10de, 0x22e8).pciClass(0x040300).driver("vfio-pci").iommuGroup(41)
                .create();
        tree.passthroughGpu("0009:01:00.0", 0x2342).driver("nvgrace_gpu_vfio_pci").iommuGroup(12).numa(1).create();
        tree.function("0000:03:00.0", 0x15b3, 0x101d).driver("mlx5_core").iommuGroup(3).numa(0).create();
        tree.function("0000:04:00.0", 0x8086, 0x1572).driver("vfio-pci").iommuGroup(4).create();
        tree.function("0000:00:00.0", 0x1022, 0x14a4).create();
        tree.nvidiaGpu("0000:61:00.0", 0x2335).iommuGroup(61).numa(1).create();
    }

    @Test
    void passthroughAdvertisesNvidiaFunctionsOnVfioDriversOnly() {
        passthroughHost();

        Discovery found = scan(PASSTHROUGH);

        assertThat(resources(found)).containsExactly(
                Map.entry("GH100_GH200_120GB___480GB", List.of("0009:01:00.0")),
                Map.entry("GH100_H200_SXM_141GB", List.of("0000:41:00.0")));
        assertThat(skips(found)).containsOnlyKeys("0000:41:00.1");
        Device gpu = device(found, "0000:41:00.0");
        assertThat(gpu.attachment()).isEqualTo(Attachment.VFIO_PCI);
        assertThat(gpu.source()).isEqualTo("passthrough");
        assertThat(gpu.parent()).isEmpty();
        assertThat(gpu.iommuGroup()).contains("41");
        assertThat(gpu.numaNode()).hasValue(0);
        assertThat(gpu.vfioCdev()).contains("vfio3");
        assertThat(device(found, "0009:01:00.0").numaNode()).hasValue(1);
    }

    @Test
    void nvidiaGpuOnTheNvidiaDriverWithoutVfsIsNotAdvertisedAndOneSourceSaysWhyAndTheFix() {
        passthroughHost();

        List<String> reasons = new ArrayList<>();
        for (var source : ALL) {
            Discovery found = scan(source);
            assertThat(found.devices()).extracting(Device::id).doesNotContain("0000:61:00.0");
            if (skips(found).containsKey("0000:61:00.0")) {
                reasons.add(source.name() + ": " + skips(found).get("0000:61:00.0"));
            }
        }
        assertThat(reasons).singleElement().asString().startsWith("vendor-vfio: 0000:61:00.0 (bound to nvidia):")
                .contains("bind it to vfio-pci");
    }

    @Test
    void audioFunctionOnVfioGoesWithItsGpusGroupAndIsNotItsOwnDevice() {
        passthroughHost();

        Discovery found = scan(PASSTHROUGH);

        assertThat(resources(found)).doesNotContainKey("GA102_HIGH_DEFINITION_AUDIO_CONTROLLER");
        assertThat(skips(found).get("0000:41:00.1")).contains("advertised as 0000:41:00.0");
        assertThat(device(found, "0000:41:00.0").iommuGroup()).contains("41");
    }

    @Test
    void withoutPciIdsTheDeviceIdNamesTheResource() {
        passthroughHost();

        Discovery found = scan(PASSTHROUGH, tree.host());

        assertThat(resources(found)).containsOnlyKeys("2335", "2342");
    }

    @Test
    void gpuBehindADeepSwitchPathIsFound() {
        tree.passthroughGpu("0000:06:00.0", 0x2335).under("pci0000:00/0000:00:03.0/0000:03:00.0/0000:04:09.0")
                .iommuGroup(6).create();

        assertThat(resources(scan(PASSTHROUGH))).containsOnlyKeys("GH100_H200_SXM_141GB");
    }

    /** An A10 with mdevs of two types, and an Ampere SR-IOV card whose mdev parent is a VF. */
    void mdevHost() {
        tree.nvidiaGpu("0000:06:00.0", 0x2236).numa(1).create();
        tree.mdev(UUID1, "0000:06:00.0", "nvidia-558", "NVIDIA A10-8Q", 7);
        tree.mdev(UUID2, "0000:06:00.0", "nvidia-558", "NVIDIA A10-8Q", 8);
        tree.sriovCard("0000:08:00.0", 0x2236).virtualFunctions(2, 80).create();
        tree.mdev(UUID3, "0000:08:00.5", "nvidia-559", "NVIDIA A10-12Q", 9);
    }

    @Test
    void mdevDevicesAreGroupedByTypeName() {
        mdevHost();

        Discovery found = scan(MDEV);

        assertThat(resources(found)).containsExactly(
                Map.entry("NVIDIA_A10-12Q", List.of(UUID3)),
                Map.entry("NVIDIA_A10-8Q", List.of(UUID2, UUID1)));
        assertThat(found.skipped()).isEmpty();
        Device mdev = device(found, UUID1);
        assertThat(mdev.attachment()).isEqualTo(Attachment.MEDIATED);
        assertThat(mdev.source()).isEqualTo("mdev");
        assertThat(mdev.parent()).contains(PciAddress.parse("0000:06:00.0"));
        assertThat(mdev.iommuGroup()).contains("7");
        assertThat(mdev.numaNode()).hasValue(1);
        assertThat(device(found, UUID3).parent()).contains(PciAddress.parse("0000:08:00.5"));
        assertThat(device(found, UUID3).numaNode()).isEmpty();
        assertThat(device(found, UUID3).vfioCdev()).isEqualTo(Optional.empty());
    }

    @Test
    void mdevHostHasNoOtherDevices() {
        mdevHost();

        assertThat(scan(PASSTHROUGH).devices()).isEmpty();
        assertThat(scan(VENDOR).devices()).isEmpty();
        assertThat(scan(VENDOR).skipped()).isEmpty();
    }

    @Test
    void gridT4NameKeepsItsCase() {
        tree.nvidiaGpu("0000:3b:00.0", 0x1eb8).create();
        tree.mdev(UUID1, "0000:3b:00.0", "nvidia-222", "GRID T4-1Q", 30);

        assertThat(resources(scan(MDEV))).containsOnlyKeys("GRID_T4-1Q");
    }

    @Test
    void removedMdevDisappearsOnRescan() {
        mdevHost();
        tree.removeMdev(UUID2);

        assertThat(resources(scan(MDEV))).containsExactly(
                Map.entry("NVIDIA_A10-12Q", List.of(UUID3)),
                Map.entry("NVIDIA_A10-8Q", List.of(UUID1)));
    }

    @Test
    void allThreeSourcesTogetherOnAMixedHost() {
        passthroughHost();
        mdevHost();
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(2, 100)
                .catalog(Map.of(1428L, "NVIDIA H200X-141C")).create();
        tree.configureVf("0000:1b:00.4", 1428);

        assertThat(resources(scan(PASSTHROUGH))).containsOnlyKeys("GH100_GH200_120GB___480GB", "GH100_H200_SXM_141GB");
        assertThat(resources(scan(MDEV))).containsOnlyKeys("NVIDIA_A10-12Q", "NVIDIA_A10-8Q");
        assertThat(resources(scan(VENDOR))).containsOnlyKeys("NVIDIA_H200X-141C");
    }
}
