/**
 * The built-in sysfs device sources: {@code passthrough} (whole GPUs on a VFIO driver), {@code mdev}
 * (mediated vGPUs) and {@code vendor-vfio} (vGPU virtual functions of the {@code nvidia} driver). All read the
 * host through {@link dev.vgpu.core.spi.Host#root()}, so they work on jimfs as well as on a real host, and read
 * what several of them need (the PCI bus listing, each function's driver link and vendor id) once per scan through
 * {@link dev.vgpu.core.spi.Host#scanScope()}.
 */
@SuppressWarnings("module") // the configurator needs this module, so it is not there when this one compiles
module dev.vgpu.sysfs {
    requires transitive dev.vgpu.core;
    // The VFIO cdev lookup that handovers use too (dev.vgpu.attach.internal, exported to this module only).
    requires dev.vgpu.attach;
    requires org.slf4j;

    exports dev.vgpu.sysfs;
    // The driver's creatable_vgpu_types parser, shared with the configurator; not API.
    exports dev.vgpu.sysfs.internal to dev.vgpu.configurator;

    provides dev.vgpu.core.spi.DeviceSource with
            dev.vgpu.sysfs.PassthroughSource,
            dev.vgpu.sysfs.MdevSource,
            dev.vgpu.sysfs.VendorVfioSource;
}
