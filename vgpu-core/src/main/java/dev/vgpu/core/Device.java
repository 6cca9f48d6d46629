package dev.vgpu.core;

import dev.vgpu.core.internal.Printable;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One advertisable device: what a source found and the kubelet will see.
 *
 * <p>Health is not part of a device; it is runtime state owned by the device plugin.
 *
 * @param id         the kubelet device id: the BDF for PCI functions, the UUID for mediated devices (1-63
 *                   printable ASCII characters without whitespace or {@code /})
 * @param resource   the resource it is advertised under
 * @param source     the name of the {@link dev.vgpu.core.spi.DeviceSource} that found it
 * @param attachment how it is handed to a VM
 * @param parent     the physical GPU: the PF of a VF or the parent of an mdev; empty for passthrough
 * @param iommuGroup the IOMMU group number as the kernel names it, when known
 * @param numaNode   the NUMA node, only when the kernel reports a non-negative one
 * @param vfioCdev   the VFIO device cdev name (e.g. {@code vfio3}) from {@code <bdf>/vfio-dev/}, when present
 * @param identity   what the source saw that makes the device <em>this</em> device, in the source's own words
 *                   (the built-in sources record a VF's vGPU type id, an mdev's type, a passthrough GPU's
 *                   vendor:device id); the source re-checks it with
 *                   {@link dev.vgpu.core.spi.DeviceSource#recheck} before the device is handed out. Empty when
 *                   the source records none. Part of equality, so a changed identity is an update.
 * @param gpuInstance the GPU instance (MIG) of its physical GPU the device lives on, when its source reports one
 *                   (a vendor-VFIO VF of a MIG-backed profile); a fault NVML reports for one GPU instance concerns
 *                   only the devices on it. Part of equality.
 * @param facts      what else the source read (profile name, device id, vGPU type id, PCIe root) for consumers
 *                   that describe devices, such as the DRA plugin's ResourceSlices; {@link DeviceFacts#NONE} when
 *                   the source records none. Part of equality.
 */
public record Device(String id, ResourceName resource, String source, Attachment attachment,
                     Optional<PciAddress> parent, Optional<String> iommuGroup, OptionalInt numaNode,
                     Optional<String> vfioCdev, Optional<String> identity, OptionalInt gpuInstance,
                     DeviceFacts facts) {

    /** Validates every field. */
    public Device {
        requireToken(id, "device id");
        Objects.requireNonNull(resource, "resource");
        requireToken(source, "source name");
        Objects.requireNonNull(attachment, "attachment");
        Objects.requireNonNull(parent, "parent");
        Objects.requireNonNull(iommuGroup, "iommuGroup");
        Objects.requireNonNull(numaNode, "numaNode");
        Objects.requireNonNull(vfioCdev, "vfioCdev");
        Objects.requireNonNull(identity, "identity");
        Objects.requireNonNull(gpuInstance, "gpuInstance");
        if (gpuInstance.isPresent() && gpuInstance.getAsInt() < 0) {
            throw new IllegalArgumentException("GPU instance must be non-negative, got " + gpuInstance.getAsInt());
        }
        Objects.requireNonNull(facts, "facts");
        identity.ifPresent(i -> requireToken(i, "identity"));
        iommuGroup.ifPresent(g -> requireToken(g, "IOMMU group"));
        vfioCdev.ifPresent(c -> requireToken(c, "VFIO cdev"));
        if (numaNode.isPresent() && numaNode.getAsInt() < 0) {
            throw new IllegalArgumentException("NUMA node must be non-negative, got " + numaNode.getAsInt());
        }
    }

    /** A device on no particular GPU instance and without {@link DeviceFacts facts}. */
    public Device(String id, ResourceName resource, String source, Attachment attachment, Optional<PciAddress> parent,
                  Optional<String> iommuGroup, OptionalInt numaNode, Optional<String> vfioCdev,
                  Optional<String> identity) {
        this(id, resource, source, attachment, parent, iommuGroup, numaNode, vfioCdev, identity, OptionalInt.empty(),
                DeviceFacts.NONE);
    }

    /** Starts a device with the required fields; optional ones default to empty. */
    public static Builder builder(String id, ResourceName resource, String source, Attachment attachment) {
        return new Builder(id, resource, source, attachment);
    }

    /** The PCI address of a {@link Attachment#VFIO_PCI} device; empty for mediated devices. */
    public Optional<PciAddress> pciAddress() {
        return attachment == Attachment.VFIO_PCI && PciAddress.isValid(id) ? Optional.of(PciAddress.parse(id))
                : Optional.empty();
    }

    /** A copy advertised under another resource. */
    public Device withResource(ResourceName other) {
        return new Device(id, other, source, attachment, parent, iommuGroup, numaNode, vfioCdev, identity,
                gpuInstance, facts);
    }

    private static void requireToken(String value, String what) {
        if (value == null || value.isEmpty() || value.length() > 63) {
            throw new IllegalArgumentException(what + " must be 1-63 characters, got "
                    + (value == null ? "null" : "\"" + Printable.of(value) + "\""));
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c <= 0x20 || c >= 0x7f || c == '/' || c == ',') {
                throw new IllegalArgumentException(what + " contains a forbidden character: \""
                        + Printable.of(value) + "\"");
            }
        }
    }

    /** Fluent construction of a {@link Device}; not thread-safe. */
    public static final class Builder {
        private final String id;
        private final ResourceName resource;
        private final String source;
        private final Attachment attachment;
        private Optional<PciAddress> parent = Optional.empty();
        private Optional<String> iommuGroup = Optional.empty();
        private OptionalInt numaNode = OptionalInt.empty();
        private Optional<String> vfioCdev = Optional.empty();
        private Optional<String> identity = Optional.empty();
        private OptionalInt gpuInstance = OptionalInt.empty();
        private DeviceFacts facts = DeviceFacts.NONE;

        private Builder(String id, ResourceName resource, String source, Attachment attachment) {
            this.id = id;
            this.resource = resource;
            this.source = source;
            this.attachment = attachment;
        }

        /** The physical GPU this device lives on. */
        public Builder parent(PciAddress value) {
            parent = Optional.ofNullable(value);
            return this;
        }

        /** The IOMMU group number. */
        public Builder iommuGroup(String value) {
            iommuGroup = Optional.ofNullable(value);
            return this;
        }

        /** The NUMA node; a negative value (the kernel's -1, "unknown") leaves it empty. */
        public Builder numaNode(int value) {
            numaNode = value < 0 ? OptionalInt.empty() : OptionalInt.of(value);
            return this;
        }

        /** The NUMA node, empty when unknown. */
        public Builder numaNode(OptionalInt value) {
            numaNode = value;
            return this;
        }

        /** The VFIO device cdev name, e.g. {@code vfio3}. */
        public Builder vfioCdev(String value) {
            vfioCdev = Optional.ofNullable(value);
            return this;
        }

        /**
         * What makes the device this device, as its source will re-check it (1-63 printable ASCII characters
         * without whitespace, {@code /} or {@code ,}), e.g. {@code vgpu-type:1152}.
         */
        public Builder identity(String value) {
            identity = Optional.ofNullable(value);
            return this;
        }

        /** The GPU instance (MIG) of its physical GPU the device lives on, empty when none is known. */
        public Builder gpuInstance(OptionalInt value) {
            gpuInstance = Objects.requireNonNull(value, "gpuInstance");
            return this;
        }

        /** What else the source read about it (profile, device id, vGPU type id, PCIe root). */
        public Builder facts(DeviceFacts value) {
            facts = Objects.requireNonNull(value, "facts");
            return this;
        }

        /** Builds and validates the device. */
        public Device build() {
            return new Device(id, resource, source, attachment, parent, iommuGroup, numaNode, vfioCdev, identity,
                    gpuInstance, facts);
        }
    }
}
