package dev.vgpu.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.ResourceName;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class DeviceCheckTest {

    @Test
    void aChangeSaysWhatItWasAndWhatItIsNow() {
        DeviceCheck check = DeviceCheck.changed("vGPU type 1152", "vGPU type 1155");

        assertThat(check.unchanged()).isFalse();
        assertThat(check.describe("0000:1b:00.4"))
                .isEqualTo("device 0000:1b:00.4 was vGPU type 1152 when advertised and is now vGPU type 1155");
        assertThat(DeviceCheck.same().unchanged()).isTrue();
        assertThatThrownBy(() -> DeviceCheck.changed("", "gone")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DeviceCheck.changed("vGPU type 1", "")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aSourceWithoutItsOwnRecheckTrustsTheSnapshot() {
        DeviceSource custom = new DeviceSource() {
            @Override
            public String name() {
                return "lab";
            }

            @Override
            public Discovery discover(Host host) {
                return Discovery.empty();
            }
        };
        Device device = Device.builder("0000:65:00.0", new ResourceName("LAB"), "lab", Attachment.VFIO_PCI).build();

        assertThat(custom.recheck(Host.of(Path.of("/nonexistent")), device)).isEqualTo(DeviceCheck.same());
    }
}
