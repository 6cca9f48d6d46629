package dev.vgpu.testing;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.Host;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Writes and changes a GPU host's {@code sys/} and {@code dev/} tree under any root {@link Path} (the default
 * file system under a {@code @TempDir}, or jimfs), laid out the way the kernel does it: device directories under
 * {@code sys/devices/pci<dom>:<bus>/<root port>/<bdf>}, and <em>relative</em> symbolic links for
 * {@code sys/bus/pci/devices/<bdf>}, {@code driver}, {@code iommu_group}, {@code physfn}, {@code virtfnN},
 * {@code mdev_type}; {@code dev/vfio/<group>} and other character devices are plain empty files.
 *
 * <pre>{@code
 * SysfsTree t = SysfsTree.at(tempDir);                       // or Jimfs.newFileSystem(Configuration.unix()).getPath("/")
 * t.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).vfioCdev("vfio3").create();
 * t.function("0000:41:00.1", 0x10de, 0x22e8).pciClass(0x040300).driver("vfio-pci").iommuGroup(41).create();
 * t.sriovCard("0000:1b:00.0", 0x2335).numa(0).virtualFunctions(4, 100)
 *         .catalog(Map.of(1428L, "NVIDIA H200X-141C")).create();  // VFs 0000:1b:00.4 .. 0000:1b:00.7
 * t.configureVf("0000:1b:00.4", 1428);
 * t.nvidiaGpu("0000:06:00.0", 0x2236).numa(1).create();
 * t.mdev("aa618089-8b16-4d01-a136-25a0f3c73123", "0000:06:00.0", "nvidia-558", "NVIDIA A10-8Q", 7);
 * t.iommufd().egm(4, "0000:41:00.0");
 * Host host = t.host();
 * }</pre>
 * Creating a function that already exists replaces it. Mutators ({@link #configureVf}, {@link #rewriteCatalog},
 * {@link #removeFunction}, {@link #removeGroupNode}, ...) change the tree between two scans; {@link #writeFile}
 * and {@link #symlink} write anything at all, for hostile inputs. Writing never fails silently: I/O errors are
 * thrown as {@link java.io.UncheckedIOException}. Not thread-safe: build the tree from one thread.
 */
public final class SysfsTree {

    static final String PCI_BUS = "sys/bus/pci/devices";
    static final String PCI_DRIVERS = "sys/bus/pci/drivers";
    static final String IOMMU_GROUPS = "sys/kernel/iommu_groups";
    static final String MDEV_BUS = "sys/bus/mdev/devices";
    static final String DEV_VFIO = "dev/vfio";
    /** Type ids are left-justified in a column this wide, as the driver prints them. */
    private static final int ID_COLUMN = 6;

    private final Path root;

    private SysfsTree(Path root) {
        this.root = Objects.requireNonNull(root, "root");
    }

    /** A tree rooted at a directory that stands for the host's {@code /}; writes nothing yet. */
    public static SysfsTree at(Path root) {
        return new SysfsTree(root);
    }

    /** The host root. */
    public Path root() {
        return root;
    }

    /** A {@link Host} on this root without pci.ids names or vGPU type resolver. */
    public Host host() {
        return Host.of(root);
    }

    /** A path under the root, e.g. {@code path("dev/vfio/41")}. */
    public Path path(String relative) {
        return root.resolve(relative);
    }

    // ---- functions and cards ----------------------------------------------------------------------------

    /** Any PCI function, e.g. a NIC {@code function(bdf, 0x15b3, 0x101d).driver("mlx5_core")}; no driver by default. */
    public PciFunction function(String bdf, int vendorId, int deviceId) {
        return new PciFunction(this, bdf, vendorId, deviceId);
    }

    /** An NVIDIA GPU bound to {@code vfio-pci} (change with {@link PciFunction#driver}); give it an IOMMU group. */
    public PciFunction passthroughGpu(String bdf, int deviceId) {
        return function(bdf, 0x10de, deviceId).pciClass(0x030200).driver("vfio-pci");
    }

    /** An NVIDIA GPU bound to the {@code nvidia} driver without VFs (an mdev parent, or not advertised at all). */
    public PciFunction nvidiaGpu(String bdf, int deviceId) {
        return function(bdf, 0x10de, deviceId).pciClass(0x030200).driver("nvidia");
    }

    /** An SR-IOV physical GPU on the {@code nvidia} driver whose VFs carry vendor-specific VFIO vGPUs. */
    public SriovCard sriovCard(String pfBdf, int deviceId) {
        return new SriovCard(this, pfBdf, deviceId);
    }

    /**
     * The address of a PF's VF: the kernel's routing id of the PF plus offset 4 and stride 1, as NVIDIA cards
     * report ({@code vfAddress("0000:1b:00.0", 0)} is {@code 0000:1b:00.4}, index 4 is {@code 0000:1b:01.0}).
     */
    public static String vfAddress(String pfBdf, int index) {
        PciAddress pf = PciAddress.parse(pfBdf);
        int routingId = (pf.bus() << 8 | pf.slot() << 3 | pf.function()) + 4 + index;
        if (index < 0 || routingId > 0xffff) {
            throw new IllegalArgumentException("VF index " + index + " of " + pfBdf + " is outside the bus range");
        }
        return new PciAddress(pf.domain(), routingId >> 8, (routingId >> 3) & 0x1f, routingId & 7).toString();
    }

    /**
     * {@code creatable_vgpu_types} in the driver's format: the header {@code ID    : vGPU Name}, then one
     * {@code <id padded> : <name>} row per type, sorted by id; only the header when the map is empty.
     */
    public static String creatableTypesText(Map<Long, String> types) {
        StringBuilder text = new StringBuilder(pad("ID")).append(": vGPU Name\n");
        new TreeMap<>(types).forEach((id, name) -> text.append(pad(Long.toString(id))).append(": ").append(name)
                .append('\n'));
        return text.toString();
    }

    private static String pad(String id) {
        return id.length() >= ID_COLUMN ? id + " " : id + " ".repeat(ID_COLUMN - id.length());
    }

    // ---- mediated devices, EGM, iommufd --------------------------------------------------------------------

    /**
     * An mdev vGPU on an existing parent function: {@code sys/bus/mdev/devices/<uuid>} links to
     * {@code <parent dir>/<uuid>}, whose {@code mdev_type} links to {@code ../mdev_supported_types/<typeId>}
     * (holding {@code name}, {@code device_api}, {@code available_instances}); the mdev gets its own IOMMU group
     * and {@code dev/vfio/<group>}.
     *
     * @throws IllegalStateException when the parent function was not created first
     */
    public SysfsTree mdev(String uuid, String parentBdf, String typeId, String typeName, int iommuGroup) {
        Path parent = devicePath(parentBdf).orElseThrow(() -> new IllegalStateException(
                "create the mdev parent " + parentBdf + " first, e.g. nvidiaGpu(bdf, id).create()"));
        Path type = parent.resolve("mdev_supported_types").resolve(typeId);
        TreeFiles.write(type.resolve("name"), typeName + "\n");
        TreeFiles.write(type.resolve("device_api"), "vfio-pci\n");
        TreeFiles.write(type.resolve("available_instances"), "0\n");
        Path mdev = parent.resolve(uuid);
        TreeFiles.mkdirs(mdev);
        TreeFiles.relativeLink(mdev.resolve("mdev_type"), type);
        TreeFiles.relativeLink(type.resolve("devices").resolve(uuid), mdev);
        joinGroup(mdev, uuid, iommuGroup, true);
        TreeFiles.relativeLink(path(MDEV_BUS).resolve(uuid), mdev);
        TreeFiles.relativeLink(path("sys/class/mdev_bus").resolve(parentBdf), parent);
        return this;
    }

    /** Removes an mdev (as writing its {@code remove} file does), its group and group node. */
    public SysfsTree removeMdev(String uuid) {
        Path link = path(MDEV_BUS).resolve(uuid);
        Optional<Path> mdev = resolve(link);
        mdev.ifPresent(dir -> {
            leaveGroup(dir, uuid);
            resolve(dir.resolve("mdev_type")).ifPresent(type -> TreeFiles.deleteTree(type.resolve("devices")
                    .resolve(uuid)));
            TreeFiles.deleteTree(dir);
        });
        TreeFiles.deleteTree(link);
        return this;
    }

    /** Creates {@code dev/iommu}, which tells that the kernel offers iommufd. */
    public SysfsTree iommufd() {
        TreeFiles.write(path("dev/iommu"), "");
        return this;
    }

    /** An EGM region: {@code sys/class/egm/egm<n>/gpu_devices} listing the GPUs, and {@code dev/egm<n>}. */
    public SysfsTree egm(int n, String... gpuBdfs) {
        TreeFiles.write(path("sys/class/egm/egm" + n + "/gpu_devices"), String.join(" ", gpuBdfs) + "\n");
        TreeFiles.write(path("dev/egm" + n), "");
        return this;
    }

    // ---- mutations between scans ---------------------------------------------------------------------------

    /** Configures a vGPU on a VF: writes the type id to {@code nvidia/current_vgpu_type}. */
    public SysfsTree configureVf(String vfBdf, long typeId) {
        return writeAttribute(vfBdf, "nvidia/current_vgpu_type", typeId + "\n");
    }

    /** Destroys a VF's vGPU: writes {@code 0} to {@code nvidia/current_vgpu_type}. */
    public SysfsTree unconfigureVf(String vfBdf) {
        return configureVf(vfBdf, 0);
    }

    /**
     * Writes the NVIDIA driver version the host reports, {@code sys/module/nvidia/version} (e.g. {@code 550.54.14});
     * a host without that file has no NVIDIA driver loaded.
     */
    public SysfsTree nvidiaDriverVersion(String version) {
        return writeFile("sys/module/nvidia/version", version + "\n");
    }

    /** Rewrites one function's {@code nvidia/creatable_vgpu_types} (an empty map writes only the header). */
    public SysfsTree rewriteCatalog(String bdf, Map<Long, String> types) {
        return writeAttribute(bdf, "nvidia/creatable_vgpu_types", creatableTypesText(types));
    }

    /** Rewrites the catalog of a PF and of every VF it links with {@code virtfnN}; empty = the card is full. */
    public SysfsTree rewriteCardCatalogs(String pfBdf, Map<Long, String> types) {
        rewriteCatalog(pfBdf, types);
        for (String vf : virtualFunctions(pfBdf)) {
            rewriteCatalog(vf, types);
        }
        return this;
    }

    /** Writes any file relative to a function's directory, e.g. {@code writeAttribute(bdf, "numa_node", "1\n")}. */
    public SysfsTree writeAttribute(String bdf, String relativeFile, String content) {
        TreeFiles.write(requireDevice(bdf).resolve(relativeFile), content);
        return this;
    }

    /** Binds a function to another driver (replacing its {@code driver} link), or unbinds it when null. */
    public SysfsTree bindDriver(String bdf, String driver) {
        Path dir = requireDevice(bdf);
        resolve(dir.resolve("driver")).ifPresent(old -> TreeFiles.deleteTree(old.resolve(bdf)));
        TreeFiles.deleteTree(dir.resolve("driver"));
        if (driver != null) {
            Path driverDir = path(PCI_DRIVERS).resolve(driver);
            TreeFiles.relativeLink(dir.resolve("driver"), driverDir);
            TreeFiles.relativeLink(driverDir.resolve(bdf), dir);
        }
        return this;
    }

    /**
     * Removes a function as hot-unplug or VF disable does: its directory, bus link, driver and group links, its
     * mdevs, its VFs when it is a PF, and on a VF the PF's {@code virtfnN} link (lowering {@code sriov_numvfs}). A
     * group left empty loses its directory and {@code dev/vfio/<group>}. Absent functions are ignored.
     */
    public SysfsTree removeFunction(String bdf) {
        Path link = path(PCI_BUS).resolve(bdf);
        Optional<Path> found = resolve(link);
        if (found.isPresent()) {
            Path dir = found.get();
            for (String vf : virtualFunctions(bdf)) {
                removeFunction(vf);
            }
            resolve(dir.resolve("physfn")).ifPresent(pf -> dropVirtfnLink(pf, bdf));
            for (Path mdevLink : TreeFiles.list(path(MDEV_BUS))) {
                if (resolve(mdevLink).map(m -> m.startsWith(dir)).orElse(false)) {
                    removeMdev(mdevLink.getFileName().toString());
                }
            }
            for (Path cdev : TreeFiles.list(dir.resolve("vfio-dev"))) {
                TreeFiles.deleteTree(path(DEV_VFIO + "/devices").resolve(cdev.getFileName().toString()));
            }
            bindDriver(bdf, null);
            leaveGroup(dir, bdf);
            TreeFiles.deleteTree(dir);
        }
        TreeFiles.deleteTree(link);
        return this;
    }

    /** Deletes {@code dev/vfio/<group>} only, as when a group's VFIO node disappears. */
    public SysfsTree removeGroupNode(int group) {
        return delete(DEV_VFIO + "/" + group);
    }

    /** Creates {@code dev/vfio/<group>} (and {@code dev/vfio/vfio}). */
    public SysfsTree addGroupNode(int group) {
        TreeFiles.write(path(DEV_VFIO + "/vfio"), "");
        return writeFile(DEV_VFIO + "/" + group, "");
    }

    // ---- raw access for hostile inputs ---------------------------------------------------------------------

    /** Writes any file under the root with this exact content, creating parent directories. */
    public SysfsTree writeFile(String relative, String content) {
        TreeFiles.write(path(relative), content);
        return this;
    }

    /** Writes any file under the root with these exact bytes, creating parent directories. */
    public SysfsTree writeFile(String relative, byte[] content) {
        TreeFiles.write(path(relative), content);
        return this;
    }

    /** Creates (or replaces) a symbolic link under the root with exactly this link text, dangling or not. */
    public SysfsTree symlink(String relative, String linkText) {
        TreeFiles.rawLink(path(relative), linkText);
        return this;
    }

    /** Creates a directory and its parents under the root. */
    public SysfsTree mkdirs(String relative) {
        TreeFiles.mkdirs(path(relative));
        return this;
    }

    /** Deletes a file, link or directory tree under the root (links are not followed); absent is fine. */
    public SysfsTree delete(String relative) {
        TreeFiles.deleteTree(path(relative));
        return this;
    }

    /**
     * Deletes any directory tree, such as a temporary host root or device-plugin directory, without following
     * links; absent is fine.
     */
    public static void deleteRecursively(Path dir) {
        TreeFiles.deleteTree(dir);
    }

    // ---- queries ----------------------------------------------------------------------------------------

    /** The real directory of a function, found through its {@code sys/bus/pci/devices} link. */
    public Optional<Path> devicePath(String bdf) {
        return resolve(path(PCI_BUS).resolve(bdf));
    }

    /** The VF addresses a PF links with {@code virtfnN}, in N order. */
    public List<String> virtualFunctions(String pfBdf) {
        TreeMap<Integer, String> vfs = new TreeMap<>();
        for (Path entry : devicePath(pfBdf).map(TreeFiles::list).orElse(List.of())) {
            String file = entry.getFileName().toString();
            if (file.matches("virtfn[0-9]{1,4}")) {
                TreeFiles.linkText(entry).ifPresent(text -> vfs.put(Integer.parseInt(file.substring(6)),
                        root.getFileSystem().getPath(text).getFileName().toString()));
            }
        }
        return new ArrayList<>(vfs.values());
    }

    // ---- shared with the builders --------------------------------------------------------------------------

    Path requireDevice(String bdf) {
        return devicePath(bdf).orElseThrow(() -> new IllegalStateException("no function " + bdf + " in " + root));
    }

    /** Links {@code dir/iommu_group} to the group, the group's {@code devices/<name>} back, and the VFIO node. */
    void joinGroup(Path dir, String name, int group, boolean node) {
        Path groupDir = path(IOMMU_GROUPS).resolve(Integer.toString(group));
        TreeFiles.relativeLink(dir.resolve("iommu_group"), groupDir);
        TreeFiles.relativeLink(groupDir.resolve("devices").resolve(name), dir);
        if (node) {
            addGroupNode(group);
        }
    }

    private void leaveGroup(Path dir, String name) {
        Optional<Path> groupDir = resolve(dir.resolve("iommu_group"));
        if (groupDir.isPresent()) {
            TreeFiles.deleteTree(groupDir.get().resolve("devices").resolve(name));
            if (TreeFiles.list(groupDir.get().resolve("devices")).isEmpty()) {
                TreeFiles.deleteTree(groupDir.get());
                removeGroupNode(Integer.parseInt(groupDir.get().getFileName().toString()));
            }
        }
    }

    private void dropVirtfnLink(Path pfDir, String vfBdf) {
        for (Path entry : TreeFiles.list(pfDir)) {
            String file = entry.getFileName().toString();
            if (file.startsWith("virtfn") && TreeFiles.linkText(entry).map(t -> t.endsWith("/" + vfBdf)).orElse(false)) {
                TreeFiles.deleteTree(entry);
            }
        }
        Path numVfs = pfDir.resolve("sriov_numvfs");
        if (Files.isRegularFile(numVfs, LinkOption.NOFOLLOW_LINKS)) {
            int left = Math.max(0, Integer.parseInt(TreeFiles.read(numVfs).strip()) - 1);
            TreeFiles.write(numVfs, left + "\n");
        }
    }

    /** Where a relative link points, resolved lexically as the kernel lays links out; empty when not a link. */
    Optional<Path> resolve(Path link) {
        return TreeFiles.linkText(link).map(text -> link.getParent().resolve(text).normalize());
    }
}
