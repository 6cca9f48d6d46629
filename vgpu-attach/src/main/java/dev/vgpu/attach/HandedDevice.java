package dev.vgpu.attach;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One device of a granted handover, with what the VM needs for it alone: what a per-device record (a CDI device, a
 * metadata entry) is made of.
 *
 * @param device     the device as the snapshot advertised it
 * @param iommuGroup its IOMMU group as the host shows it now (for an mdev, its own group)
 * @param nodes      its own nodes: {@code /dev/vfio/vfio}, with iommufd {@code /dev/iommu}, its group node, and with
 *                   iommufd the cdev of every function of its group; EGM nodes belong to the whole handover
 *                   ({@link Handover.Granted#nodes()})
 */
public record HandedDevice(Device device, String iommuGroup, List<DeviceNode> nodes) {

    /** Copies the list. */
    public HandedDevice {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(iommuGroup, "iommuGroup");
        nodes = List.copyOf(nodes);
    }

    /** The PCI address the VM gets ({@code resource.kubernetes.io/pciBusID}); empty for a mediated device. */
    public Optional<PciAddress> pciBusId() {
        return device.pciAddress();
    }

    /** The mediated device's UUID (KubeVirt's {@code mdevUUID}); empty for a PCI function. */
    public Optional<String> mdevUuid() {
        return device.attachment() == Attachment.MEDIATED ? Optional.of(device.id()) : Optional.empty();
    }
}
