package dev.vgpu.core;

import static dev.vgpu.core.TestDevices.bdf;
import static dev.vgpu.core.TestDevices.mdev;
import static dev.vgpu.core.TestDevices.name;
import static dev.vgpu.core.TestDevices.pci;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

/** Validation of the device values: {@link Device}, {@link Resource}, {@link Skipped}. */
class DeviceTest {

    @Test
    void theBuilderFillsOptionalFields() {
        Device device = pci("0000:1b:00.4", "NVIDIA_L40S-1Q", "vendor-vfio").parent(bdf("0000:1b:00.0"))
                .iommuGroup("71").numaNode(1).vfioCdev("vfio12").build();

        assertThat(device.parent()).contains(bdf("0000:1b:00.0"));
        assertThat(device.iommuGroup()).contains("71");
        assertThat(device.numaNode()).hasValue(1);
        assertThat(device.vfioCdev()).contains("vfio12");
        assertThat(device.pciAddress()).contains(bdf("0000:1b:00.4"));
        assertThat(device.withResource(name("OTHER")).resource()).isEqualTo(name("OTHER"));
        assertThat(device.withResource(name("OTHER")).id()).isEqualTo(device.id());
    }

    @Test
    void theIdentityIsKeptValidatedAndPartOfEquality() {
        Device a = pci("0000:1b:00.4", "X", "vendor-vfio").identity("vgpu-type:1152").build();
        Device b = pci("0000:1b:00.4", "X", "vendor-vfio").identity("vgpu-type:1155").build();

        assertThat(a.identity()).contains("vgpu-type:1152");
        assertThat(a.withResource(name("OTHER")).identity()).contains("vgpu-type:1152");
        assertThat(a).isNotEqualTo(b);
        assertThat(pci("0000:1b:00.4", "X", "vendor-vfio").build().identity()).isEmpty();
        assertThatThrownBy(() -> pci("0000:1b:00.4", "X", "vendor-vfio").identity("type 1152").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("identity");
        assertThatThrownBy(() -> pci("0000:1b:00.4", "X", "vendor-vfio").identity("").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("identity");
    }

    @Test
    void theGpuInstanceIsKeptValidatedAndPartOfEquality() {
        Device on3 = pci("0000:1b:00.4", "X", "vendor-vfio").gpuInstance(OptionalInt.of(3)).build();
        Device on5 = pci("0000:1b:00.4", "X", "vendor-vfio").gpuInstance(OptionalInt.of(5)).build();

        assertThat(on3.gpuInstance()).hasValue(3);
        assertThat(on3.withResource(name("OTHER")).gpuInstance()).hasValue(3);
        assertThat(on3).isNotEqualTo(on5);
        assertThat(pci("0000:1b:00.4", "X", "vendor-vfio").build().gpuInstance()).isEmpty();
        assertThat(new Device("0000:1b:00.4", name("X"), "vendor-vfio", Attachment.VFIO_PCI, Optional.empty(),
                Optional.empty(), OptionalInt.empty(), Optional.empty(), Optional.empty()).gpuInstance()).isEmpty();
        assertThatThrownBy(() -> pci("0000:1b:00.4", "X", "vendor-vfio").gpuInstance(OptionalInt.of(-1)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("GPU instance");
    }

    @Test
    void theKernelsMinusOneMeansNoNumaNode() {
        Device device = pci("0000:1b:00.4", "X", "passthrough").numaNode(-1).build();

        assertThat(device.numaNode()).isEmpty();
        assertThat(pci("0000:1b:00.4", "X", "passthrough").numaNode(OptionalInt.empty()).build().numaNode()).isEmpty();
        assertThatThrownBy(() -> new Device("0000:1b:00.4", name("X"), "passthrough", Attachment.VFIO_PCI,
                Optional.empty(), Optional.empty(), OptionalInt.of(-1), Optional.empty(), Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NUMA");
    }

    @Test
    void aMediatedDeviceHasNoPciAddress() {
        assertThat(mdev("aa618089-8b16-4d01-a136-25a0f3c73123", "GRID_T4-1Q", "mdev").build().pciAddress()).isEmpty();
        assertThat(pci("lab-7", "X", "lab").build().pciAddress()).isEmpty();
    }

    @ParameterizedTest(name = "device id \"{0}\" is rejected")
    @NullAndEmptySource
    @ValueSource(strings = {"0000:1b:00.4 ", "a b", "a/b", "../x", "a,b", "a\u0000b", "a\nb", "é", "\u007f"})
    void idsMustBeSafeTokens(String id) {
        assertThatThrownBy(() -> pci(id, "X", "lab").build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("device id");
    }

    @Test
    void idsAreAtMost63Characters() {
        assertThat(pci("x".repeat(63), "X", "lab").build().id()).hasSize(63);
        assertThatThrownBy(() -> pci("x".repeat(64), "X", "lab").build()).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest(name = "IOMMU group \"{0}\" is rejected")
    @ValueSource(strings = {"", "4 1", "../41", "41/..", "4\u00001"})
    void groupsAndSourceNamesMustBeSafeTokens(String bad) {
        assertThatThrownBy(() -> pci("0000:1b:00.4", "X", "lab").iommuGroup(bad).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("IOMMU group");
        assertThatThrownBy(() -> pci("0000:1b:00.4", "X", "lab").vfioCdev(bad).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("VFIO cdev");
        assertThatThrownBy(() -> pci("0000:1b:00.4", "X", bad).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("source name");
    }

    @Test
    void aResourceSortsItsDevicesAndRejectsStrangers() {
        Device b = pci("0000:1b:00.5", "X", "lab").build();
        Device a = pci("0000:1b:00.4", "X", "lab").build();

        Resource resource = Resource.of(List.of(b, a));

        assertThat(resource.devices()).containsExactly(a, b);
        assertThat(resource.ids()).containsExactly("0000:1b:00.4", "0000:1b:00.5");
        assertThatThrownBy(() -> Resource.of(List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Resource.of(List.of(a, a))).hasMessageContaining("listed twice");
        assertThatThrownBy(() -> Resource.of(List.of(a, pci("0000:1b:00.6", "Y", "lab").build())))
                .hasMessageContaining("does not belong");
        assertThatThrownBy(() -> Resource.of(List.of(a, pci("0000:1b:00.6", "X", "other").build())))
                .hasMessageContaining("does not belong");
        assertThatThrownBy(() -> Resource.of(List.of(a,
                mdev("aa618089-8b16-4d01-a136-25a0f3c73123", "X", "lab").build())))
                .hasMessageContaining("does not belong");
        assertThatThrownBy(() -> new Resource(name("X"), "lab", Attachment.VFIO_PCI, List.of()))
                .hasMessageContaining("no devices");
    }

    @Test
    void aSkipNeedsAReason() {
        assertThat(new Skipped("0000:1b:00.4", "lab", "no iommu_group").reason()).isEqualTo("no iommu_group");
        assertThatThrownBy(() -> new Skipped("0000:1b:00.4", "lab", " ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Skipped("0000:1b:00.4", "lab", null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Skipped(null, "lab", "x")).isInstanceOf(NullPointerException.class);
    }
}
