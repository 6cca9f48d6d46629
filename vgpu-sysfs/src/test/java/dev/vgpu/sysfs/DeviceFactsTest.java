package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.Device;
import dev.vgpu.core.DeviceFacts;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * The facts each built-in source records beyond what advertising needs (profile, device id, vGPU type id, PCIe
 * root), as the DRA plugin's ResourceSlice attributes carry them (docs/DRA.md §4), read from real-layout trees.
 */
class DeviceFactsTest extends SourceTestBase {

    @Override
    Path newRoot() {
        return tempDir.resolve("host");
    }

    @Test
    void aPassthroughGpuCarriesItsPciIdsNameItsDeviceIdAndTheRootComplexOfItsBusLink() {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).create();
        tree.passthroughGpu("0000:c5:00.0", 0x2335).iommuGroup(42).under("pci0000:c0/0000:c0:03.0/0000:c1:00.0")
                .create();

        assertThat(device(scan(PASSTHROUGH), "0000:41:00.0").facts()).isEqualTo(new DeviceFacts(
                Optional.of("GH100 [H200 SXM 141GB]"), Optional.of("2335"), OptionalLong.empty(),
                Optional.of("pci0000:40")));
        // Behind a switch: the root complex, not the nearest bridge.
        assertThat(device(scan(PASSTHROUGH), "0000:c5:00.0").facts().pcieRoot()).contains("pci0000:c0");
    }

    @Test
    void aGpuWithoutAPciIdsNameHasItsDeviceIdAsProfile() {
        tree.passthroughGpu("0000:41:00.0", 0x2bb5).iommuGroup(41).create();

        assertThat(device(scan(PASSTHROUGH), "0000:41:00.0").facts().profile()).contains("2bb5");
    }

    @Test
    void aVfCarriesItsProfileTypeIdDeviceIdAndItsCardsRootComplex() {
        tree.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(2, 100)
                .catalog(Map.of(1152L, "NVIDIA  L40S-1Q")).create();
        tree.configureVf("0000:1b:00.4", 1152);

        Device vf = device(scan(VENDOR), "0000:1b:00.4");

        assertThat(vf.facts()).isEqualTo(new DeviceFacts(Optional.of("NVIDIA L40S-1Q"), Optional.of("26b9"),
                OptionalLong.of(1152), Optional.of("pci0000:10")));
    }

    @Test
    void anMdevCarriesItsTypeNameAndItsParentsDeviceIdButNoPcieRoot() {
        tree.nvidiaGpu("0000:06:00.0", 0x1eb8).create();
        tree.mdev("aa618089-8b16-4d01-a136-25a0f3c73123", "0000:06:00.0", "nvidia-222", "GRID T4-1Q", 7);

        assertThat(device(scan(MDEV), "aa618089-8b16-4d01-a136-25a0f3c73123").facts()).isEqualTo(new DeviceFacts(
                Optional.of("GRID T4-1Q"), Optional.of("1eb8"), OptionalLong.empty(), Optional.empty()));
    }

    @Test
    void aBusLinkThatNamesNoRootComplexLeavesThePcieRootOutAndTheDeviceAdvertised() {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).create();
        tree.delete("sys/bus/pci/devices/0000:41:00.0");
        // The same directory reached through a link named like no root complex.
        tree.symlink("sys/devices/pcix", "pci0000:40");
        tree.symlink("sys/bus/pci/devices/0000:41:00.0", "../../../devices/pcix/0000:40:01.1/0000:41:00.0");

        Device gpu = device(scan(PASSTHROUGH), "0000:41:00.0");

        assertThat(gpu.facts().pcieRoot()).isEmpty();
        assertThat(gpu.facts().deviceId()).contains("2335");
    }

    @Test
    void anMdevTypeNameNoAttributeCanCarryIsNoProfileButTheMdevIsAdvertised() {
        tree.nvidiaGpu("0000:06:00.0", 0x1eb8).create();
        tree.mdev("aa618089-8b16-4d01-a136-25a0f3c73123", "0000:06:00.0", "nvidia-222", "GRID T4-1Q", 7);
        tree.writeFile("sys/devices/pci0000:00/0000:00:01.1/0000:06:00.0/mdev_supported_types/nvidia-222/name",
                "GRID\u0007T4-1Q\n");

        Device mdev = device(scan(MDEV), "aa618089-8b16-4d01-a136-25a0f3c73123");

        assertThat(mdev.facts().profile()).isEmpty();
        assertThat(mdev.facts().deviceId()).contains("1eb8");
    }
}
