package dev.vgpu.daemon.dra;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.ResourceName;
import dev.vgpu.testsupport.CapturedStderr;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A resource whose device-plugin socket is in the kubelet's device-plugin directory is served by a device plugin on
 * the node, so it is never bridged; the first time, one WARN says so.
 */
class DevicePluginServedTest {

    @TempDir
    Path tmp;

    @Test
    void aResourceWithItsSocketThereIsServedAndSaidOnce() throws Exception {
        ResourceName served = new ResourceName("NVIDIA_L40S-1Q");
        ResourceName other = new ResourceName("GRID_T4-1Q");
        Files.createFile(tmp.resolve(served.socketFileName()));
        DevicePluginServed check = new DevicePluginServed(tmp);

        String log = CapturedStderr.of(() -> {
            assertThat(check.test(served)).isTrue();
            assertThat(check.test(served)).isTrue();
            assertThat(check.test(other)).isFalse();
            assertThat(check.negate().test(other)).isTrue();
        });

        assertThat(log.lines().filter(l -> l.contains(" WARN "))).singleElement()
                .satisfies(l -> assertThat(l).contains("nvidia.com/NVIDIA_L40S-1Q", "device plugin"));
    }

    @Test
    void withoutTheDirectoryNothingIsServed() {
        assertThat(new DevicePluginServed(tmp.resolve("absent")).test(new ResourceName("A"))).isFalse();
    }
}
