package dev.vgpu.daemon.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.Device;
import dev.vgpu.core.PciIds;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.deviceplugin.PluginManager;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.sysfs.PassthroughSource;
import dev.vgpu.testing.SysfsTree;
import dev.vgpu.testsupport.RecordingThreads;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code /healthz}'s problems of device-plugin mode (docs/RELIABILITY.md, "The gRPC servers"). */
@Tag("reliability")
class DevicePluginLivenessTest {

    private static final String GPU = "0000:41:00.0";

    @TempDir
    Path tmp;

    @Test
    void aDirectMemoryErrorOnAGrpcCallThreadFailsLivenessForGood() throws Exception {
        Path root = tmp.resolve("host");
        SysfsTree tree = SysfsTree.at(root);
        tree.mkdirs("dev/vfio");
        tree.passthroughGpu(GPU, 0x2335).iommuGroup(41).numa(0).create();
        Path dir = tmp.resolve("dp");
        // The checks run on the test's scheduler, so the only threads of the manager's factory that re-check a
        // device are the transport's call threads.
        RecordingThreads threads = new RecordingThreads("manager");
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(2);
        List<DeviceSource> sources = List.of(new OutOfDirectMemoryInAllocate(threads));
        Scanner scanner = new Scanner(root, PciIds.empty(), VgpuTypeResolver.none(), sources);
        try (StandInKubelet kubelet = StandInKubelet.start(dir);
             PluginManager plugins = PluginManager.builder().hostRoot(root).devicePluginDir(dir).sources(sources)
                     .threads(threads).scheduler(scheduler).build();
             DevicePluginAdapter adapter = new DevicePluginAdapter(plugins)) {
            Snapshot first = scanner.scan(Snapshot.empty());
            plugins.apply(first);
            String resource = first.resources().firstKey().fullName();
            kubelet.await(Duration.ofSeconds(20), k -> k.streaming(resource));
            assertThat(adapter.notLive()).isEmpty();

            assertThatThrownBy(() -> kubelet.allocate(resource, List.of(GPU)));

            await().atMost(Duration.ofSeconds(20)).until(() -> !adapter.notLive().isEmpty());
            assertThat(adapter.notLive()).singleElement().asString()
                    .contains("a gRPC call thread died of java.lang.OutOfMemoryError", "direct buffer memory",
                            "restart the daemon");
        } finally {
            scheduler.shutdownNow();
        }
    }

    /** The passthrough source, whose re-check on a thread of {@code callThreads} runs out of direct memory. */
    private static final class OutOfDirectMemoryInAllocate implements DeviceSource {
        private final PassthroughSource real = new PassthroughSource();
        private final RecordingThreads callThreads;

        OutOfDirectMemoryInAllocate(RecordingThreads callThreads) {
            this.callThreads = callThreads;
        }

        @Override
        public String name() {
            return real.name();
        }

        @Override
        public Discovery discover(Host host) throws IOException {
            return real.discover(host);
        }

        @Override
        public DeviceCheck recheck(Host host, Device device) {
            if (callThreads.made(Thread.currentThread())) {
                throw new OutOfMemoryError("Cannot reserve 8192 bytes of direct buffer memory");
            }
            return real.recheck(host, device);
        }
    }
}
