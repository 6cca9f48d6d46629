package dev.vgpu.attach;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The one health value both adapters judge by, and its words. */
class DeviceHealthTest {

    @Test
    void eachSignalAloneMakesADeviceUnhealthyAndSaysWhy() {
        assertThat(DeviceHealth.HEALTHY.healthy()).isTrue();
        assertThat(DeviceHealth.HEALTHY.why(Optional.of("41"))).isEqualTo("healthy");

        DeviceHealth gone = DeviceHealth.HEALTHY.withGroupNodePresent(false);
        assertThat(gone.healthy()).isFalse();
        assertThat(gone.why(Optional.of("41"))).isEqualTo("/dev/vfio/41 is gone");
        assertThat(gone.why(Optional.empty())).isEqualTo("its VFIO group node is gone");

        DeviceHealth xid = DeviceHealth.HEALTHY.withGpuFault(true);
        assertThat(xid.healthy()).isFalse();
        assertThat(xid.why(Optional.of("41"))).isEqualTo("its GPU reported a critical XID");

        DeviceHealth changed = DeviceHealth.HEALTHY.withIdentityChange("device 0000:1b:00.4 was vGPU type 1152 when"
                + " advertised and is now vGPU type 1155");
        assertThat(changed.healthy()).isFalse();
        assertThat(changed.why(Optional.empty())).startsWith("device 0000:1b:00.4 was");
    }

    @Test
    void everyReasonThatHoldsIsJoinedInOneOrder() {
        DeviceHealth all = new DeviceHealth(false, true, "it changed");
        assertThat(all.why(Optional.of("7"))).isEqualTo("/dev/vfio/7 is gone; its GPU reported a critical XID;"
                + " it changed");
        assertThat(all.withGroupNodePresent(true).withGpuFault(false).withIdentityChange("")).isEqualTo(
                DeviceHealth.HEALTHY);
        assertThatNullPointerException().isThrownBy(() -> new DeviceHealth(true, false, null));
    }
}
