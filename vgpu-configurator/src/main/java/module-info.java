/**
 * The vGPU configurator: makes vendor-VFIO cards (Ada, Hopper, Blackwell) hold a declared vGPU layout.
 * {@link dev.vgpu.configurator.Planner} turns what a host holds ({@link dev.vgpu.configurator.HostFacts}) and what a
 * card should hold ({@link dev.vgpu.configurator.CardDemand}) into steps or a refusal, as a pure function;
 * {@link dev.vgpu.configurator.Applier} carries the steps out through {@link dev.vgpu.configurator.HostWrites},
 * verifies each write by reading back and rolls a card back when a step fails;
 * {@link dev.vgpu.configurator.sysfs.SysfsVgpuHost} reads and writes a real host's sysfs under a root directory;
 * {@link dev.vgpu.configurator.file.VgpuConfigFile} reads NVIDIA vgpu-device-manager's layout files and
 * {@link dev.vgpu.configurator.inuse.KubeletCheckpoint} the kubelet's record of the devices it allocated.
 */
module dev.vgpu.configurator {
    requires transitive dev.vgpu.core;
    // CreatableTypesCatalog, the one parser of the driver's creatable_vgpu_types table (dev.vgpu.sysfs.internal,
    // exported to this module only).
    requires dev.vgpu.sysfs;
    requires org.slf4j;
    // vgpu-device-manager layout files and the kubelet's device checkpoint.
    requires org.snakeyaml.engine.v2;

    exports dev.vgpu.configurator;
    exports dev.vgpu.configurator.file;
    exports dev.vgpu.configurator.inuse;
    exports dev.vgpu.configurator.sysfs;
}
