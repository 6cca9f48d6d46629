package dev.vgpu.testing;

import dev.vgpu.core.PciAddress;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;

/**
 * One PCI function to create in a {@link SysfsTree}; start it with {@link SysfsTree#function},
 * {@link SysfsTree#passthroughGpu} or {@link SysfsTree#nvidiaGpu} and finish with {@link #create()}.
 *
 * <p>{@code create()} writes {@code sys/devices/<parent>/<bdf>/} with {@code vendor} and {@code device}
 * ({@code 0x10de\n}), {@code numa_node} ({@code -1\n} unless set), {@code class} when set, the relative links
 * {@code sys/bus/pci/devices/<bdf>}, {@code driver} (and the driver's back-link), {@code iommu_group} (and the
 * group's {@code devices/<bdf>}), {@code dev/vfio/vfio} and {@code dev/vfio/<group>}, and for a VFIO cdev
 * {@code vfio-dev/<name>/} plus {@code dev/vfio/devices/<name>}. Not thread-safe.
 */
public final class PciFunction {

    private final SysfsTree tree;
    private final String bdf;
    private final int vendorId;
    private final int deviceId;
    private String driver;
    private Integer iommuGroup;
    private boolean groupNode = true;
    private int numa = -1;
    private String vfioCdev;
    private Integer pciClass;
    private String parent;

    PciFunction(SysfsTree tree, String bdf, int vendorId, int deviceId) {
        this.tree = tree;
        this.bdf = PciAddress.parse(bdf).toString();
        this.vendorId = vendorId;
        this.deviceId = deviceId;
        this.parent = defaultParent(this.bdf);
    }

    /**
     * The directory a device sits in under {@code sys/devices}: a root complex and root port derived from the
     * bus, e.g. {@code pci0000:40/0000:40:01.1} for {@code 0000:41:00.0}.
     */
    static String defaultParent(String bdf) {
        PciAddress address = PciAddress.parse(bdf);
        String domain = bdf.substring(0, bdf.indexOf(':'));
        String hostBus = String.format(Locale.ROOT, "%s:%02x", domain, address.bus() & 0xf0);
        return "pci" + hostBus + "/" + hostBus + ":01.1";
    }

    /** Binds it to a driver ({@code driver -> ../../../../bus/pci/drivers/<name>}); null leaves it unbound. */
    public PciFunction driver(String name) {
        this.driver = name;
        return this;
    }

    /** Puts it in an IOMMU group, creating {@code dev/vfio/<group>} as well. */
    public PciFunction iommuGroup(int group) {
        this.iommuGroup = group;
        return this;
    }

    /** Leaves out {@code dev/vfio/<group>}, as for a group the kernel does not offer through VFIO. */
    public PciFunction withoutGroupNode() {
        this.groupNode = false;
        return this;
    }

    /** The NUMA node written to {@code numa_node}; {@code -1} (the default) means unknown. */
    public PciFunction numa(int node) {
        this.numa = node;
        return this;
    }

    /** A VFIO device cdev, e.g. {@code vfio3}: {@code vfio-dev/vfio3/} and {@code dev/vfio/devices/vfio3}. */
    public PciFunction vfioCdev(String name) {
        this.vfioCdev = name;
        return this;
    }

    /** The 24-bit class code written to {@code class}, e.g. {@code 0x030200} (3D controller), {@code 0x040300} (audio). */
    public PciFunction pciClass(int classCode) {
        this.pciClass = classCode;
        return this;
    }

    /**
     * The directory under {@code sys/devices} to create it in, e.g. {@code pci0000:00/0000:00:03.0/0000:03:00.0}
     * for a GPU behind a switch; the default is derived from the bus.
     */
    public PciFunction under(String devicesSubPath) {
        this.parent = Objects.requireNonNull(devicesSubPath, "devicesSubPath");
        return this;
    }

    /** Writes the function, replacing one with the same address, and returns the tree. */
    public SysfsTree create() {
        write();
        return tree;
    }

    /** Writes the function and returns its directory. */
    Path write() {
        tree.removeFunction(bdf);
        Path dir = tree.path("sys/devices").resolve(parent).resolve(bdf);
        TreeFiles.write(dir.resolve("vendor"), String.format(Locale.ROOT, "0x%04x\n", vendorId));
        TreeFiles.write(dir.resolve("device"), String.format(Locale.ROOT, "0x%04x\n", deviceId));
        TreeFiles.write(dir.resolve("numa_node"), numa + "\n");
        if (pciClass != null) {
            TreeFiles.write(dir.resolve("class"), String.format(Locale.ROOT, "0x%06x\n", pciClass));
        }
        TreeFiles.relativeLink(tree.path(SysfsTree.PCI_BUS).resolve(bdf), dir);
        tree.bindDriver(bdf, driver);
        if (iommuGroup != null) {
            tree.joinGroup(dir, bdf, iommuGroup, groupNode);
        }
        if (vfioCdev != null) {
            TreeFiles.mkdirs(dir.resolve("vfio-dev").resolve(vfioCdev));
            TreeFiles.write(tree.path(SysfsTree.DEV_VFIO + "/devices").resolve(vfioCdev), "");
        }
        return dir;
    }

    String parent() {
        return parent;
    }
}
