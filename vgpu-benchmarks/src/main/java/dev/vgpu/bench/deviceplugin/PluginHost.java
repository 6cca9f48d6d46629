package dev.vgpu.bench.deviceplugin;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.Reconciler;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSources;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.deviceplugin.PluginManager;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import dev.vgpu.testing.SysfsTree;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A host with {@value #GPUS} passthrough H200s (one IOMMU group each, with an audio sibling, NUMA 0/1) in a
 * temporary directory, a stand-in kubelet, a {@link PluginManager} serving them, and a benchmark-side channel to
 * the plugin's unix socket.
 */
final class PluginHost implements AutoCloseable {

    static final int GPUS = 8;
    static final ResourceName RESOURCE = new ResourceName("GH100_H200_SXM_141GB");

    final Path dir;
    final StandInKubelet kubelet;
    final PluginManager manager;
    final UnixDomainTransport client;
    final ManagedChannel channel;
    final List<String> bdfs = new ArrayList<>();
    private Snapshot current = Snapshot.empty();

    PluginHost() throws IOException {
        dir = Files.createTempDirectory("vgpu-dp-bench");
        SysfsTree host = SysfsTree.at(dir.resolve("host"));
        for (int i = 0; i < GPUS; i++) {
            String gpu = String.format(Locale.ROOT, "0000:%02x:00.0", 0x41 + i);
            host.passthroughGpu(gpu, 0x2335).iommuGroup(41 + i).numa(i % 2).create();
            host.function(String.format(Locale.ROOT, "0000:%02x:00.1", 0x41 + i), 0x10de, 0x22e8).driver("vfio-pci")
                    .iommuGroup(41 + i).create();
            bdfs.add(gpu);
        }
        kubelet = StandInKubelet.start(dir.resolve("dp"));
        manager = PluginManager.builder().hostRoot(host.root()).devicePluginDir(dir.resolve("dp"))
                .healthPollInterval(Duration.ofSeconds(5)).sources(DeviceSources.load()).build();
        apply(snapshot(GPUS));
        try {
            kubelet.await(Duration.ofSeconds(30), k -> k.streaming(RESOURCE.fullName()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        client = UnixDomainTransport.create("bench-client", 1, 1);
        channel = client.dial(manager.socket(RESOURCE).orElseThrow());
    }

    /** A snapshot advertising the first {@code count} GPUs. */
    Snapshot snapshot(int count) {
        Discovery.Builder discovery = Discovery.builder();
        for (int i = 0; i < count; i++) {
            discovery.add(Device.builder(bdfs.isEmpty() ? String.format(Locale.ROOT, "0000:%02x:00.0", 0x41 + i)
                            : bdfs.get(i), RESOURCE, "passthrough", Attachment.VFIO_PCI)
                    .iommuGroup(Integer.toString(41 + i)).numaNode(i % 2).identity("pci:10de:2335").build());
        }
        return Snapshot.builder().add("passthrough", discovery.build()).build();
    }

    /** Moves the manager to {@code next} with the reconciler's plan. */
    void apply(Snapshot next) {
        manager.apply(next, Reconciler.plan(current, next));
        current = next;
    }

    @Override
    public void close() throws IOException {
        channel.shutdownNow();
        client.close();
        manager.close();
        kubelet.close();
        SysfsTree.deleteRecursively(dir);
    }
}
