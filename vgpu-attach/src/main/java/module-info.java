/**
 * What a virtual machine needs for a device, in one place below the adapters: {@link dev.vgpu.attach.Handovers}
 * re-checks devices of a {@link dev.vgpu.core.Snapshot} against the host and answers the device nodes (VFIO
 * legacy and iommufd, EGM), the KubeVirt environment entries, or why the devices are refused. The device plugin's
 * Allocate and the DRA plugin's Prepare both ask it (docs/ARCHITECTURE.md, "Attachment knowledge").
 * {@link dev.vgpu.attach.GpuFaults} is the XID fault policy both adapters apply (which devices a GPU's fault
 * covers, GPU-instance scoping, recovery after a quiet period and a probe).
 *
 * <p>{@code dev.vgpu.attach.internal} reads the host's VFIO files; it is not API and is exported only to the
 * built-in sources, which record the same VFIO cdev that a handover hands out.
 */
@SuppressWarnings("module") // dev.vgpu.sysfs needs this module, so it is not there when this one compiles
module dev.vgpu.attach {
    requires transitive dev.vgpu.core;
    requires org.slf4j;

    exports dev.vgpu.attach;
    exports dev.vgpu.attach.internal to dev.vgpu.sysfs;
}
