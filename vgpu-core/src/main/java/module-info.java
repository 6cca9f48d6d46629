/**
 * Domain values, the {@link dev.vgpu.core.spi.DeviceSource} SPI, immutable snapshots and the pure
 * reconciler. Knows no sysfs, sockets or native code: sources get everything through
 * {@link dev.vgpu.core.spi.Host}.
 */
module dev.vgpu.core {
    requires org.slf4j;

    exports dev.vgpu.core;
    exports dev.vgpu.core.spi;

    uses dev.vgpu.core.spi.DeviceSource;
}
