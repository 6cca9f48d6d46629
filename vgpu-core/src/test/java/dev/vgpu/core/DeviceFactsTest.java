package dev.vgpu.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** What {@link DeviceFacts} accepts, and that a device keeps its facts through a rename. */
class DeviceFactsTest {

    @Test
    void factsAreValidatedAsTheSlicesNeedThem() {
        assertThatThrownBy(() -> DeviceFacts.NONE.withDeviceId("26B9")).hasMessageContaining("four lower-case hex");
        assertThatThrownBy(() -> DeviceFacts.NONE.withPcieRoot("0000:40")).hasMessageContaining("pci<domain>:<bus>");
        assertThatThrownBy(() -> DeviceFacts.NONE.withVgpuTypeId(-1)).hasMessageContaining("non-negative");
        assertThatThrownBy(() -> DeviceFacts.NONE.withProfile("GRID\nT4")).hasMessageContaining("printable");
        assertThatThrownBy(() -> DeviceFacts.NONE.withProfile("")).hasMessageContaining("1-256");
        assertThat(DeviceFacts.isProfile("NVIDIA L40S-1Q")).isTrue();
        assertThat(DeviceFacts.isProfile("x".repeat(257))).isFalse();
        assertThat(DeviceFacts.NONE.withPcieRoot("pci10000:e0").pcieRoot()).contains("pci10000:e0");
    }

    @Test
    void aRenamedDeviceKeepsItsFactsAndFactsArePartOfEquality() {
        DeviceFacts facts = DeviceFacts.NONE.withProfile("NVIDIA L40S-1Q").withDeviceId("26b9").withVgpuTypeId(1152);
        Device vf = Device.builder("0000:1b:00.4", new ResourceName("NVIDIA_L40S-1Q"), "vendor-vfio",
                Attachment.VFIO_PCI).facts(facts).build();

        assertThat(vf.withResource(new ResourceName("vgpu")).facts()).isEqualTo(facts);
        assertThat(vf).isNotEqualTo(Device.builder("0000:1b:00.4", new ResourceName("NVIDIA_L40S-1Q"), "vendor-vfio",
                Attachment.VFIO_PCI).build());
    }
}
