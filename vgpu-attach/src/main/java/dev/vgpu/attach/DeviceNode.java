package dev.vgpu.attach;

import java.util.Objects;

/**
 * A device node a VM needs, by its real host path (never prefixed by a test host root: the root is only where the
 * checks read). Adapters hand it over as the same path inside the container with {@link #PERMISSIONS}.
 *
 * @param path the node's absolute host path, e.g. {@code /dev/vfio/41}
 * @param kind what the node is for
 */
public record DeviceNode(String path, Kind kind) {

    /** The cgroup device permissions every node is handed over with: read, write and mknod, as KubeVirt asks. */
    public static final String PERMISSIONS = "mrw";

    /** Checks that the path is absolute. */
    public DeviceNode {
        Objects.requireNonNull(kind, "kind");
        if (path == null || !path.startsWith("/dev/")) {
            throw new IllegalArgumentException("a device node path starts with /dev/, got " + path);
        }
    }

    /** What a node is for (docs/HOST-FACTS.md §1a, §3). */
    public enum Kind {
        /** {@code /dev/vfio/vfio}, the legacy VFIO container every VFIO device needs. */
        VFIO_CONTAINER,
        /** {@code /dev/iommu}, the iommufd node that goes with the VFIO cdevs. */
        IOMMUFD,
        /** {@code /dev/vfio/<group>}, one IOMMU group's legacy node. */
        VFIO_GROUP,
        /** {@code /dev/vfio/devices/vfioN}, one PCI function's VFIO cdev (iommufd). */
        VFIO_CDEV,
        /** {@code /dev/egmN}, an Extended GPU Memory region whose every GPU is handed over. */
        EGM
    }
}
