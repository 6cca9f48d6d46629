package com.example.dralab;

import dev.vgpu.attach.Handovers;
import dev.vgpu.core.Reconciler;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.DeviceSources;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.dra.ClaimReader;
import dev.vgpu.dra.DraPlugin;
import dev.vgpu.dra.KubeletRegistration;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Scans a fake host with the built-in sources and serves it as a DRA plugin on the module path: both sockets bound
 * (the device plugin's transport through its qualified export, the generated services loaded), then closed; no
 * API-server client comes with it.
 */
public final class DraLabDemo {

    public static void main(String[] args) throws Exception {
        Path tmp = Files.createTempDirectory("dra-lab-demo");
        SysfsTree host = SysfsTree.at(tmp.resolve("host"));
        host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).create();
        List<DeviceSource> sources = DeviceSources.load();
        Snapshot snapshot = Scanner.of(host.root(), sources).scan(Snapshot.empty());
        System.out.println("sources " + sources.stream().map(s -> s.name()).toList() + ", "
                + snapshot.deviceCount() + " devices");
        ClaimReader none = ref -> new ClaimReader.Unavailable("no API server in this demo");
        DraPlugin plugin = DraPlugin.builder(Handovers.forHost(host.host(), sources), none)
                .pool("lab-node").kubeletRoot(tmp.resolve("kubelet")).cdiDir(tmp.resolve("cdi"))
                .stateDir(tmp.resolve("state")).start();
        try {
            plugin.apply(snapshot, Reconciler.plan(Snapshot.empty(), snapshot));
            require(Files.exists(plugin.registrationSocket()), "registration socket " + plugin.registrationSocket());
            require(Files.exists(plugin.draSocket()), "DRA socket " + plugin.draSocket());
            require(plugin.registration() instanceof KubeletRegistration.Waiting, "registration state");
            System.out.println("serving " + plugin.registrationSocket().getFileName() + " and "
                    + plugin.draSocket().getFileName());
        } finally {
            plugin.close();
        }
        require(!Files.exists(plugin.draSocket()), "the DRA socket removed");
        // The kubelet-side plugin carries no API-server client: that is vgpu-dra-apiserver's.
        require(ModuleLayer.boot().findModule("kubernetes.client.api").isEmpty(), "fabric8 on the module path");
        System.out.println("DRA DEMO OK");
    }

    private static void require(boolean condition, String what) {
        if (!condition) {
            throw new IllegalStateException("unexpected " + what);
        }
    }
}
