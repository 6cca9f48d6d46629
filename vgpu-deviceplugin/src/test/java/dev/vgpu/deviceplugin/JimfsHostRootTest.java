package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.jimfs.Configuration;
import com.google.common.jimfs.Jimfs;
import dev.vgpu.core.Reconciler;
import dev.vgpu.core.Snapshot;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.kubelet.api.v1beta1.DeviceSpec;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.FileSystem;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host root may live on another file system than the device-plugin directory (jimfs in tests, as the sources
 * allow): the manager still builds, serves and allocates, with the periodic check standing in for the directory
 * watch that only the default file system can offer.
 */
class JimfsHostRootTest {

    @Test
    void aHostRootOnJimfsIsServedAndAllocated(@TempDir Path tmp) throws Exception {
        try (FileSystem fs = Jimfs.newFileSystem(Configuration.unix())) {
            SysfsTree host = SysfsTree.at(fs.getPath("/host"));
            host.mkdirs("dev/vfio");
            host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
            Path pluginDir = tmp.resolve("dp");
            try (StandInKubelet kubelet = StandInKubelet.start(pluginDir);
                 PluginManager manager = PluginManager.builder().hostRoot(host.root()).devicePluginDir(pluginDir)
                         .healthPollInterval(Duration.ofMillis(200))
                         .registrationBackoff(Duration.ofMillis(20), Duration.ofMillis(200)).build()) {
                Snapshot next = snapshot(passthrough("0000:41:00.0", 41, 0));
                manager.apply(next, Reconciler.plan(Snapshot.empty(), next));
                kubelet.await(Harness.WAIT, k -> k.streaming(H200.fullName()));

                var response = kubelet.allocate(H200.fullName(), List.of("0000:41:00.0")).getContainerResponses(0);
                assertThat(response.getEnvsMap())
                        .isEqualTo(Map.of("PCI_RESOURCE_NVIDIA_COM_GH100_H200_SXM_141GB", "0000:41:00.0"));
                assertThat(response.getDevicesList()).extracting(DeviceSpec::getHostPath)
                        .containsExactly("/dev/vfio/vfio", "/dev/vfio/41");
            }
        }
    }
}
