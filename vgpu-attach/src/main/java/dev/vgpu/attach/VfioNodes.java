package dev.vgpu.attach;

/** Which VFIO interface a handover offers the VM's VFIO devices (docs/HOST-FACTS.md §1a, trap 20). */
public enum VfioNodes {
    /**
     * The legacy nodes only: {@code /dev/vfio/vfio} and the group nodes (and EGM); no {@code /dev/iommu} or cdev is
     * looked up. For an embedder that must not hand out iommufd; neither adapter of this project uses it.
     */
    LEGACY,
    /**
     * The legacy nodes, plus {@code /dev/iommu} and the VFIO cdev of every function of each handed-over PCI group
     * when {@code <host-root>/dev/iommu} exists and every function the VM must get has a cdev; otherwise the
     * legacy nodes alone. What both adapters hand KubeVirt ({@link Handovers#FOR_KUBEVIRT}).
     */
    IOMMUFD_WHEN_PRESENT
}
