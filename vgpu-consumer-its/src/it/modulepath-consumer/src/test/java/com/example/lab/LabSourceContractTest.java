package com.example.lab;

import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.testing.contract.DeviceSourceContract;
import dev.vgpu.testing.SysfsTree;

/** Runs the generic DeviceSource contract of vgpu-source-contract against LabSource. */
class LabSourceContractTest extends DeviceSourceContract {
    @Override
    protected DeviceSource source() {
        return new LabSource();
    }

    @Override
    protected void populate(SysfsTree tree) {
        tree.function("0000:65:00.0", 0x10de, 0x2335).driver("vfio-pci").iommuGroup(65).create();
        tree.writeFile("etc/lab-gpus", "0000:65:00.0\n");
    }
}
