package dev.vgpu.sysfs;

import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.testing.contract.DeviceSourceContract;
import dev.vgpu.testing.SysfsTree;

/** The generic DeviceSource contract of vgpu-testing, run against the VendorVfioSource source. */
class VendorVfioSourceContractTest extends DeviceSourceContract {

    @Override
    protected DeviceSource source() {
        return new VendorVfioSource();
    }

    @Override
    protected void populate(SysfsTree tree) {
        tree.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(2, 100).catalog(java.util.Map.of(1152L, "NVIDIA L40S-1Q")).create();
        tree.configureVf("0000:1b:00.4", 1152);
    }
}
