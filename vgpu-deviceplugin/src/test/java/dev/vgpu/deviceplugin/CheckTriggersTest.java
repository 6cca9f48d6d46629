package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.Reconciler;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which check rounds re-read the devices: a change in the device-plugin directory (the kubelet's socket, the
 * plugins' own sockets as they start) checks the sockets only; a change in {@code /dev/vfio} checks the devices too.
 * The poll is an hour, so only the directory watch starts rounds here; a source that counts its re-checks tells which
 * rounds read the devices.
 */
@Tag("reliability")
class CheckTriggersTest {

    @TempDir
    Path tmp;

    /** A source that discovers nothing and counts how often a device of its is re-checked. */
    static final class CountingSource implements DeviceSource {
        final AtomicInteger rechecks = new AtomicInteger();

        @Override
        public String name() {
            return "counting";
        }

        @Override
        public Discovery discover(Host host) {
            return Discovery.empty();
        }

        @Override
        public DeviceCheck recheck(Host host, Device device) {
            rechecks.incrementAndGet();
            return DeviceCheck.same();
        }
    }

    @Test
    void theDevicePluginDirectorysChangesCheckTheSocketsAndDevVfiosTheDevicesToo() throws Exception {
        SysfsTree host = SysfsTree.at(tmp.resolve("host"));
        host.mkdirs("dev/vfio");
        host.addGroupNode(41);
        Path pluginDir = tmp.resolve("dp");
        CountingSource source = new CountingSource();
        StandInKubelet kubelet = StandInKubelet.start(pluginDir);
        try (PluginManager manager = PluginManager.builder().hostRoot(host.root()).devicePluginDir(pluginDir)
                .healthPollInterval(Duration.ofHours(1)).registrationBackoff(Duration.ofMillis(20),
                        Duration.ofMillis(200)).sources(List.of(source)).build()) {
            Snapshot next = snapshot(Device.builder("0000:41:00.0", H200, "counting", Attachment.VFIO_PCI)
                    .iommuGroup("41").numaNode(0).build());
            manager.apply(next, Reconciler.plan(Snapshot.empty(), next));
            kubelet.await(Harness.WAIT, k -> k.listUpdates(H200.fullName()) >= 1);

            // The plugin's socket appeared (and the kubelet's went) in the device-plugin directory: rounds that see
            // the kubelet gone, without reading the device.
            kubelet.close();
            await().atMost(Harness.WAIT).until(() -> !manager.kubeletSocketPresent());
            int afterSocketRounds = source.rechecks.get();

            host.addGroupNode(42);
            await().atMost(Harness.WAIT).until(() -> source.rechecks.get() > afterSocketRounds);

            assertThat(afterSocketRounds).as("re-checks by the rounds of the device-plugin directory").isZero();
        } finally {
            kubelet.close();
        }
    }
}
