package com.example.vgpulayout;

import dev.vgpu.configurator.Applier;
import dev.vgpu.configurator.ApplyReport;
import dev.vgpu.configurator.CardDemand;
import dev.vgpu.configurator.CardOutcome;
import dev.vgpu.configurator.HostWrites;
import dev.vgpu.configurator.InUse;
import dev.vgpu.configurator.file.VgpuConfigFile;
import dev.vgpu.configurator.file.VgpuLayout;
import dev.vgpu.configurator.inuse.KubeletCheckpoint;
import dev.vgpu.configurator.sysfs.SysfsVgpuHost;
import dev.vgpu.core.PciAddress;
import dev.vgpu.testing.SimulatedCard;
import dev.vgpu.testing.SysfsTree;
import dev.vgpu.testing.VgpuManagerSimulator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

/**
 * Applies a two-card vGPU layout of a vgpu-device-manager file on a simulated host from the module path: VFs enabled
 * on the card that had none, a VF the kubelet's checkpoint names left alone with its card refused, a second run that
 * writes nothing, a reboot undone.
 */
public final class LayoutDemo {

    public static void main(String[] args) throws Exception {
        Path root = Files.createTempDirectory("vgpu-layout-demo");
        VgpuManagerSimulator simulator = VgpuManagerSimulator.create(SysfsTree.at(root),
                SimulatedCard.l40s("0000:41:00.0").withTotalVfs(4),
                SimulatedCard.l40s("0000:81:00.0").withTotalVfs(4).withEnabledVfs(0));
        SysfsVgpuHost host = SysfsVgpuHost.at(root);
        Applier applier = new Applier(host, HostWrites.of(simulator::writeVfCount, simulator::writeType));
        // A vgpu-device-manager file (parsed by snakeyaml-engine, a module the configurator reads it with).
        VgpuLayout file = VgpuConfigFile.parse("""
                version: v1
                vgpu-configs:
                  default:
                    - devices: [0]
                      vgpu-devices: {"L40S-12Q": 2}
                    - devices: [1]
                      device-filter: "0x26B910DE"
                      vgpu-devices: {"NVIDIA L40S-8Q": 3}
                """).select("default");
        Map<PciAddress, CardDemand> layout = file.demands(host.read(Set.of())).demands();
        require(layout.equals(Map.of(
                PciAddress.parse("0000:41:00.0"), CardDemand.layout(Map.of("L40S-12Q", 2)),
                PciAddress.parse("0000:81:00.0"), CardDemand.layout(Map.of("NVIDIA L40S-8Q", 3)))),
                "the file's layout names GPU 0 and GPU 1");

        ApplyReport first = applier.apply(layout, InUse.none());
        first.cards().forEach(outcome -> System.out.println(outcome.describe()));
        require(first.hostMatches() && first.writes() == 6, "the first run applies both cards in 6 writes");

        ApplyReport second = applier.apply(layout, InUse.none());
        require(second.cards().stream().allMatch(outcome -> outcome instanceof CardOutcome.Unchanged)
                && simulator.writeAttempts() == 6, "the second run writes nothing");

        simulator.hold("0000:41:00.4");
        Path deviceDir = Files.createDirectories(root.resolve("device-plugins"));
        Files.writeString(deviceDir.resolve(KubeletCheckpoint.FILE), "{\"Data\":{\"PodDeviceEntries\":[{\"DeviceIDs\":"
                + "{\"0\":[\"0000:41:00.4\"]}}]}}");
        ApplyReport held = applier.apply(Map.of(PciAddress.parse("0000:41:00.0"),
                CardDemand.layout(Map.of("L40S-24Q", 1))), KubeletCheckpoint.in(deviceDir));
        System.out.println(held.cards().get(0).describe());
        require(held.cards().get(0) instanceof CardOutcome.Refused && simulator.writeAttempts() == 6,
                "a card with a VF in use is refused without a write");

        simulator.reboot();
        require(applier.apply(layout, InUse.none()).hostMatches(), "the layout is restored after a reboot");
        System.out.println("CONFIGURATOR DEMO OK on the module path: " + LayoutDemo.class.getModule().getName()
                + " with " + Applier.class.getModule().getName());
        SysfsTree.deleteRecursively(root);
    }

    private static void require(boolean condition, String what) {
        if (!condition) {
            throw new IllegalStateException("failed: " + what);
        }
    }
}
