package dev.vgpu.sysfs;

import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.testing.contract.DeviceSourceContract;
import dev.vgpu.testing.SysfsTree;

/** The generic DeviceSource contract of vgpu-testing, run against the PassthroughSource source. */
class PassthroughSourceContractTest extends DeviceSourceContract {

    @Override
    protected DeviceSource source() {
        return new PassthroughSource();
    }

    @Override
    protected void populate(SysfsTree tree) {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
    }
}
