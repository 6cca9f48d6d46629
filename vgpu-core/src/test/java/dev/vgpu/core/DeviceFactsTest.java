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
    void deviceIdsAndPcieRootsAreExactlyTheirForm() {
        for (String good : new String[] {"26b9", "0000", "ffff", "10de"}) {
            assertThat(DeviceFacts.NONE.withDeviceId(good).deviceId()).contains(good);
        }
        for (String bad : new String[] {"", "26b", "26b91", "26g9", "26B9", " 26b", "\u0661\u0662\u0663\u0664"}) {
            assertThatThrownBy(() -> DeviceFacts.NONE.withDeviceId(bad)).as(bad)
                    .hasMessageContaining("four lower-case hex");
        }
        for (String good : new String[] {"pci0000:00", "pci0000:e0", "pci12345678:ff", "pci10000:e0"}) {
            assertThat(DeviceFacts.NONE.withPcieRoot(good).pcieRoot()).contains(good);
        }
        for (String bad : new String[] {"", "pci", "pci000:00", "pci123456789:00", "pci0000:0", "pci0000:000",
            "pci0000-00", "PCI0000:00", "pci0000:E0", "pcI0000:00", "xpci0000:00", "pci0000:00\n", "pcig000:00"}) {
            assertThatThrownBy(() -> DeviceFacts.NONE.withPcieRoot(bad)).as(bad)
                    .hasMessageContaining("pci<domain>:<bus>");
        }
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
