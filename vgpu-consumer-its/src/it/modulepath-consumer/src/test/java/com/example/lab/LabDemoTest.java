package com.example.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vgpu.core.Plan;
import dev.vgpu.core.RescanLoop;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.DeviceSources;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.deviceplugin.PluginManager;
import dev.vgpu.kubelet.standin.Allocation;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Scans a fake host, serves it to a stand-in kubelet, allocates a GPU, then rescans after a GPU appears. */
class LabDemoTest {
    private static final String RESOURCE = "nvidia.com/LAB_GPU";

    @Test
    void scanServeAllocateRescan(@TempDir Path tmp) throws Exception {
        SysfsTree host = SysfsTree.at(tmp.resolve("host"));
        host.function("0000:65:00.0", 0x10de, 0x2331).driver("lab-vfio").iommuGroup(7).create();
        host.addGroupNode(7).writeFile("etc/lab-gpus", "0000:65:00.0\n");
        Path pluginDir = tmp.resolve("device-plugins");

        List<DeviceSource> sources = DeviceSources.load();
        Scanner scanner = Scanner.of(host.root(), sources);
        try (StandInKubelet kubelet = StandInKubelet.start(pluginDir);
                PluginManager plugins = PluginManager.builder()
                        .hostRoot(host.root()).devicePluginDir(pluginDir).sources(sources).build()) {
            Snapshot first = scanner.scan(Snapshot.empty());
            Plan plan = plugins.apply(first);
            System.out.println("sources " + sources.stream().map(DeviceSource::name).toList() + ": " + plan);
            kubelet.await(Duration.ofSeconds(30), k -> k.streaming(RESOURCE));

            Allocation allocation = kubelet.allocation(RESOURCE, List.of("0000:65:00.0"));
            System.out.println("allocated " + allocation.envs() + " " + allocation.hostPaths());
            assertEquals("0000:65:00.0", allocation.envs().get("PCI_RESOURCE_NVIDIA_COM_LAB_GPU"));
            assertTrue(allocation.hostPaths().contains("/dev/vfio/7"), "the group node is handed over");

            host.function("0000:66:00.0", 0x10de, 0x2331).driver("lab-vfio").iommuGroup(8).create();
            host.addGroupNode(8).writeFile("etc/lab-gpus", "0000:65:00.0\n0000:66:00.0\n");
            try (RescanLoop loop = new RescanLoop(scanner, plugins, Duration.ofMinutes(1), first)) {
                loop.runNow();
            }
            kubelet.await(Duration.ofSeconds(30), k -> k.resources().getOrDefault(RESOURCE, List.of()).size() == 2);
            System.out.println("rescanned: " + kubelet.resources().get(RESOURCE).size() + " devices");
        }
        System.out.println("LAB DEMO OK");
    }
}
