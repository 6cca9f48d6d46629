package com.example.lab;

import dev.vgpu.core.Plan;
import dev.vgpu.core.RescanLoop;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSources;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.deviceplugin.PluginManager;
import dev.vgpu.deviceplugin.kubelet.Allocation;
import dev.vgpu.deviceplugin.kubelet.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** Scans a fake host, serves it to a stand-in kubelet, allocates a GPU, then rescans after a GPU appears. */
public final class LabDemo {
    private static final String RESOURCE = "nvidia.com/LAB_GPU";

    public static void main(String[] args) throws Exception {
        Path tmp = Files.createTempDirectory("lab-demo");
        SysfsTree host = SysfsTree.at(tmp.resolve("host"));
        host.function("0000:65:00.0", 0x10de, 0x2331).driver("lab-vfio").iommuGroup(7).create();
        host.addGroupNode(7).writeFile("etc/lab-gpus", "0000:65:00.0\n");
        Path pluginDir = tmp.resolve("device-plugins");

        Scanner scanner = Scanner.of(host.root(), DeviceSources.load());
        try (StandInKubelet kubelet = StandInKubelet.start(pluginDir);
                PluginManager plugins = PluginManager.builder()
                        .hostRoot(host.root()).devicePluginDir(pluginDir).build()) {
            Snapshot first = scanner.scan(Snapshot.empty());
            Plan plan = plugins.apply(first);
            System.out.println("sources " + scanner.sources().stream().map(s -> s.name()).toList() + ", " + plan);
            kubelet.await(Duration.ofSeconds(30), k -> k.streaming(RESOURCE));

            Allocation allocation = kubelet.allocation(RESOURCE, List.of("0000:65:00.0"));
            System.out.println("allocated " + allocation.envs() + " " + allocation.hostPaths());
            require("0000:65:00.0".equals(allocation.envs().get("PCI_RESOURCE_NVIDIA_COM_LAB_GPU")), "env");
            require(allocation.hostPaths().contains("/dev/vfio/7"), "group node");

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

    private static void require(boolean condition, String what) {
        if (!condition) {
            throw new IllegalStateException("unexpected " + what);
        }
    }
}
