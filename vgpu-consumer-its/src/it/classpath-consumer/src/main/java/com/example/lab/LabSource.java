package com.example.lab;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Advertises the GPUs listed in {@code <host root>/etc/lab-gpus} as {@code nvidia.com/LAB_GPU}. */
public final class LabSource implements DeviceSource {
    @Override
    public String name() {
        return "lab";
    }

    @Override
    public Discovery discover(Host host) throws IOException {
        Path list = host.path("etc/lab-gpus");
        Discovery.Builder out = Discovery.builder();
        if (!Files.isRegularFile(list)) {
            return out.build();
        }
        ResourceName name = ResourceName.sanitize("LAB_GPU").orElseThrow();
        for (String line : Files.readAllLines(list)) {
            String bdf = line.strip();
            if (bdf.isEmpty()) {
                continue;
            }
            Path group = host.path("sys/bus/pci/devices/" + bdf + "/iommu_group");
            if (!Files.isSymbolicLink(group)) {
                out.skip(bdf, name(), "no iommu_group link: is the IOMMU on?");
                continue;
            }
            out.add(Device.builder(bdf, name, name(), Attachment.VFIO_PCI)
                    .iommuGroup(Files.readSymbolicLink(group).getFileName().toString())
                    .build());
        }
        return out.build();
    }
}
