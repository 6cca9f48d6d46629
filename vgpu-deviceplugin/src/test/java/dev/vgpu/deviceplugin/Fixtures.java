package dev.vgpu.deviceplugin;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.Discovery;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Devices and snapshots for tests, named the way the built-in sources name them. */
final class Fixtures {

    static final ResourceName H200 = new ResourceName("GH100_H200_SXM_141GB");
    static final ResourceName L40S_1Q = new ResourceName("NVIDIA_L40S-1Q");
    static final ResourceName L40S_2Q = new ResourceName("NVIDIA_L40S-2Q");
    static final ResourceName T4_1Q = new ResourceName("GRID_T4-1Q");

    private Fixtures() {
    }

    /** A passthrough GPU (no parent). */
    static Device passthrough(String bdf, int group, int numa) {
        return Device.builder(bdf, H200, "passthrough", Attachment.VFIO_PCI)
                .iommuGroup(Integer.toString(group)).numaNode(numa).build();
    }

    /** A vendor-VFIO VF under {@code pf}. */
    static Device vf(ResourceName resource, String bdf, String pf, int group, int numa) {
        return Device.builder(bdf, resource, "vendor-vfio", Attachment.VFIO_PCI)
                .parent(PciAddress.parse(pf)).iommuGroup(Integer.toString(group)).numaNode(numa).build();
    }

    /** An mdev vGPU on {@code parent}. */
    static Device mdev(String uuid, String parent, int group, int numa) {
        return Device.builder(uuid, T4_1Q, "mdev", Attachment.MEDIATED)
                .parent(PciAddress.parse(parent)).iommuGroup(Integer.toString(group)).numaNode(numa).build();
    }

    /** The same device with the identity its built-in source records (e.g. {@code vgpu-type:1147}). */
    static Device identified(Device d, String identity) {
        return new Device(d.id(), d.resource(), d.source(), d.attachment(), d.parent(), d.iommuGroup(), d.numaNode(),
                d.vfioCdev(), Optional.of(identity));
    }

    /** A snapshot of these devices, each source's devices in one discovery. */
    static Snapshot snapshot(Device... devices) {
        return snapshot(List.of(devices));
    }

    /** A snapshot of these devices, each source's devices in one discovery. */
    static Snapshot snapshot(List<Device> devices) {
        Map<String, List<Device>> bySource = new LinkedHashMap<>();
        for (Device d : devices) {
            bySource.computeIfAbsent(d.source(), s -> new ArrayList<>()).add(d);
        }
        Snapshot.Builder out = Snapshot.builder();
        bySource.forEach((source, list) -> out.add(source, new Discovery(list, List.of())));
        return out.build();
    }
}
