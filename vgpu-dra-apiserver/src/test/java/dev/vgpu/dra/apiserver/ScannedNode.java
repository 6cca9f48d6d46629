package dev.vgpu.dra.apiserver;

import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.sysfs.MdevSource;
import dev.vgpu.sysfs.PassthroughSource;
import dev.vgpu.sysfs.VendorVfioSource;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The node of vgpu-dra's tests as the built-in sources scan it: a passthrough H200 (group 41, with its audio
 * function), an L40S with two VF vGPUs (groups 100, 101) and a T4 carrying one mdev (group 7).
 */
final class ScannedNode {

    static final String UUID = "aa618089-8b16-4d01-a136-25a0f3c73123";
    static final String GPU = "pci-0000-41-00-0";
    static final String VF = "pci-0000-1b-00-4";
    static final String VF2 = "pci-0000-1b-00-5";
    static final String MDEV = "mdev-" + UUID;

    private ScannedNode() {
    }

    /** Builds the host under {@code dir/host} and scans it. */
    static Snapshot snapshot(Path dir) {
        SysfsTree host = SysfsTree.at(dir.resolve("host"));
        host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).create();
        host.function("0000:41:00.1", 0x10de, 0x22e8).driver("vfio-pci").iommuGroup(41).create();
        host.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(2, 100)
                .catalog(Map.of(1152L, "NVIDIA L40S-1Q", 1155L, "NVIDIA L40S-4Q")).create();
        host.configureVf("0000:1b:00.4", 1152).configureVf("0000:1b:00.5", 1152);
        host.nvidiaGpu("0000:06:00.0", 0x1eb8).create();
        host.mdev(UUID, "0000:06:00.0", "nvidia-222", "GRID T4-1Q", 7);
        List<DeviceSource> sources = List.of(new PassthroughSource(), new MdevSource(), new VendorVfioSource());
        return new Scanner(host.host(), sources).run(Snapshot.empty()).snapshot();
    }
}
