package dev.vgpu.testing;

import dev.vgpu.core.PciAddress;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * An SR-IOV NVIDIA card for vendor-specific VFIO vGPUs, started with {@link SysfsTree#sriovCard} and finished
 * with {@link #create()}.
 *
 * <p>The PF is bound to {@code nvidia} and gets {@code sriov_totalvfs}, {@code sriov_numvfs} and one
 * {@code virtfnN} link per VF. Each VF ({@link SysfsTree#vfAddress addresses} PF + 4, + 5, ...) is bound to
 * {@code nvidia} too, has the PF's vendor, device id and NUMA node, a {@code physfn} link back, its own IOMMU
 * group and {@code dev/vfio/<group>}, {@code nvidia/current_vgpu_type} = {@code 0} and
 * {@code nvidia/creatable_vgpu_types} with the {@link #catalog catalog} (only the header when none was given).
 * <pre>{@code
 * t.sriovCard("0000:1b:00.0", 0x2335).numa(0).virtualFunctions(4, 100).vfioCdevs(10)
 *         .catalog(Map.of(1428L, "NVIDIA H200X-141C", 1414L, "NVIDIA H200X-1-18C")).create();
 * }</pre>
 * Not thread-safe.
 */
public final class SriovCard {

    private final SysfsTree tree;
    private final String pfBdf;
    private final int deviceId;
    private int numa = -1;
    private Integer pfGroup;
    private int vfCount;
    private int firstGroup;
    private Integer totalVfs;
    private Integer firstCdev;
    private Map<Long, String> catalog = Map.of();
    private boolean catalogOnPf = true;
    private String parent;

    SriovCard(SysfsTree tree, String pfBdf, int deviceId) {
        this.tree = tree;
        this.pfBdf = PciAddress.parse(pfBdf).toString();
        this.deviceId = deviceId;
        this.parent = PciFunction.defaultParent(this.pfBdf);
    }

    /** The NUMA node of the PF and its VFs; {@code -1} (the default) means unknown. */
    public SriovCard numa(int node) {
        this.numa = node;
        return this;
    }

    /** An IOMMU group for the PF itself (none by default). */
    public SriovCard iommuGroup(int group) {
        this.pfGroup = group;
        return this;
    }

    /** Enables {@code count} VFs; VF {@code i} is in IOMMU group {@code firstGroup + i}. */
    public SriovCard virtualFunctions(int count, int firstGroup) {
        if (count < 0) {
            throw new IllegalArgumentException("VF count must be non-negative, got " + count);
        }
        this.vfCount = count;
        this.firstGroup = firstGroup;
        return this;
    }

    /** What {@code sriov_totalvfs} says; the default is the number of enabled VFs. */
    public SriovCard totalVfs(int total) {
        this.totalVfs = total;
        return this;
    }

    /** Gives VF {@code i} the VFIO cdev {@code vfio<first + i>} (none by default). */
    public SriovCard vfioCdevs(int first) {
        this.firstCdev = first;
        return this;
    }

    /** The creatable types written to the PF and every VF, type id to profile name. */
    public SriovCard catalog(Map<Long, String> types) {
        this.catalog = Map.copyOf(types);
        return this;
    }

    /** Whether the PF has {@code nvidia/creatable_vgpu_types} too (default true; the real driver is unverified). */
    public SriovCard catalogOnPf(boolean present) {
        this.catalogOnPf = present;
        return this;
    }

    /** The directory under {@code sys/devices} holding the PF and its VFs; the default is derived from the bus. */
    public SriovCard under(String devicesSubPath) {
        this.parent = Objects.requireNonNull(devicesSubPath, "devicesSubPath");
        return this;
    }

    /** Writes the card, replacing a function with the PF's address and its VFs, and returns the tree. */
    public SysfsTree create() {
        PciFunction pf = tree.nvidiaGpu(pfBdf, deviceId).numa(numa).under(parent);
        if (pfGroup != null) {
            pf.iommuGroup(pfGroup);
        }
        Path pfDir = pf.write();
        TreeFiles.write(pfDir.resolve("sriov_totalvfs"), (totalVfs == null ? vfCount : totalVfs) + "\n");
        TreeFiles.write(pfDir.resolve("sriov_numvfs"), vfCount + "\n");
        String catalogText = SysfsTree.creatableTypesText(catalog);
        if (catalogOnPf) {
            TreeFiles.write(pfDir.resolve("nvidia/creatable_vgpu_types"), catalogText);
        }
        for (int i = 0; i < vfCount; i++) {
            writeVf(tree, pfDir, i, new VfLayout(pfBdf, deviceId, numa, firstGroup, firstCdev, parent), catalogText);
        }
        return tree;
    }

    /**
     * Where a card's VFs go and what they share: VF {@code i} is in IOMMU group {@code firstGroup + i} and has the
     * cdev {@code vfio<firstCdev + i>} (none when {@code firstCdev} is null).
     */
    record VfLayout(String pfBdf, int deviceId, int numa, int firstGroup, Integer firstCdev, String parent) {
    }

    /**
     * Writes VF {@code i} of an existing PF as enabling SR-IOV does: the function (bound to {@code nvidia}, its own
     * IOMMU group), {@code physfn} and the PF's {@code virtfn<i>}, {@code nvidia/current_vgpu_type} = 0 and the
     * catalog text.
     */
    static void writeVf(SysfsTree tree, Path pfDir, int i, VfLayout layout, String catalogText) {
        String vfBdf = SysfsTree.vfAddress(layout.pfBdf(), i);
        PciFunction vf = tree.nvidiaGpu(vfBdf, layout.deviceId()).numa(layout.numa())
                .iommuGroup(layout.firstGroup() + i).under(layout.parent());
        if (layout.firstCdev() != null) {
            vf.vfioCdev("vfio" + (layout.firstCdev() + i));
        }
        Path vfDir = vf.write();
        TreeFiles.relativeLink(vfDir.resolve("physfn"), pfDir);
        TreeFiles.relativeLink(pfDir.resolve("virtfn" + i), vfDir);
        TreeFiles.write(vfDir.resolve("nvidia/current_vgpu_type"), "0\n");
        TreeFiles.write(vfDir.resolve("nvidia/creatable_vgpu_types"), catalogText);
    }
}
