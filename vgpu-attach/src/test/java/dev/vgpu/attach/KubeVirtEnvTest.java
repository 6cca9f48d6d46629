package dev.vgpu.attach;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.ResourceName;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The one builder of KubeVirt's device-plugin environment, which Allocate and the DRA bridge share: one variable per
 * resource and attachment, ids comma-joined in the order given, a device given twice counted once.
 */
class KubeVirtEnvTest {

    private static Device vf(String bdf, String resource) {
        return Device.builder(bdf, new ResourceName(resource), "vendor-vfio", Attachment.VFIO_PCI)
                .parent(PciAddress.parse("0000:1b:00.0")).iommuGroup("1" + bdf.substring(bdf.length() - 1)).build();
    }

    @Test
    void oneVariablePerResourceInTheOrderOfItsFirstDevice() {
        Device a = vf("0000:1b:00.5", "NVIDIA_L40S-1Q");
        Device b = vf("0000:1b:00.4", "NVIDIA_L40S-1Q");
        Device c = vf("0000:1b:00.6", "NVIDIA_L40S-2Q");
        Device mdev = Device.builder("aa618089-8b16-4d01-a136-25a0f3c73123", new ResourceName("GRID_T4-1Q"), "mdev",
                Attachment.MEDIATED).parent(PciAddress.parse("0000:06:00.0")).iommuGroup("7").build();

        Map<String, String> env = KubeVirtEnv.of(List.of(a, c, b, a, mdev));

        assertThat(env).containsExactly(
                Map.entry("PCI_RESOURCE_NVIDIA_COM_NVIDIA_L40S-1Q", "0000:1b:00.5,0000:1b:00.4"),
                Map.entry("PCI_RESOURCE_NVIDIA_COM_NVIDIA_L40S-2Q", "0000:1b:00.6"),
                Map.entry("MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_T4-1Q", "aa618089-8b16-4d01-a136-25a0f3c73123"));
        assertThat(KubeVirtEnv.of(List.of())).isEmpty();
    }
}
