package dev.vgpu.sysfs;

import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.testing.contract.DeviceSourceContract;
import dev.vgpu.testing.SysfsTree;

/** The generic DeviceSource contract of vgpu-testing, run against the MdevSource source. */
class MdevSourceContractTest extends DeviceSourceContract {

    @Override
    protected DeviceSource source() {
        return new MdevSource();
    }

    @Override
    protected void populate(SysfsTree tree) {
        tree.nvidiaGpu("0000:06:00.0", 0x1eb8).create();
        tree.mdev("aa618089-8b16-4d01-a136-25a0f3c73123", "0000:06:00.0", "nvidia-222", "GRID T4-1Q", 7);
    }
}
