package dev.vgpu.deviceplugin;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.AttributeFiles;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The sysfs and devfs facts that allocation and health read at run time, always under the host root.
 *
 * <p>Stateless and thread-safe; every method reads the file system anew. Symlinks are read with
 * {@code readlink} and only their last path component is used, as the kernel's relative links require. Files are
 * read only through {@link AttributeFiles} (regular files, at most 64 KiB), the same reader discovery uses; the
 * device identities Allocate and health re-check are read by each device's source through it too.
 */
final class HostFiles {

    private static final Pattern GROUP = Pattern.compile("[0-9]{1,10}");
    private static final Pattern VIRTFN = Pattern.compile("virtfn[0-9]{1,5}");
    private static final Pattern SAFE_NAME = Pattern.compile("[A-Za-z0-9:._-]{1,63}");

    private final Path root;

    HostFiles(Path root) {
        this.root = root;
    }

    /** True for an IOMMU group name the kernel could have made (decimal), so it is safe in a path. */
    static boolean isGroupName(String group) {
        return GROUP.matcher(group).matches();
    }

    /** Whether {@code /dev/iommu} exists, i.e. the VFIO device cdevs (iommufd) are usable. */
    boolean iommufd() {
        return exists(root.resolve("dev/iommu"));
    }

    /** Whether {@code /dev/vfio/<group>} exists. */
    boolean groupNodePresent(String group) {
        return isGroupName(group) && exists(root.resolve("dev/vfio").resolve(group));
    }

    /** The IOMMU group of a PCI function from its {@code iommu_group} link, empty when unreadable. */
    Optional<String> pciIommuGroup(String bdf) {
        return safe(bdf) ? linkName(pciDevice(bdf).resolve("iommu_group")) : Optional.empty();
    }

    /** The IOMMU group of a mediated device from its {@code iommu_group} link, empty when unreadable. */
    Optional<String> mdevIommuGroup(String uuid) {
        return safe(uuid) ? linkName(root.resolve("sys/bus/mdev/devices").resolve(uuid).resolve("iommu_group"))
                : Optional.empty();
    }

    /** The VFs a PF links with {@code virtfnN}, sorted; empty for a function without VFs or when unreadable. */
    List<PciAddress> virtualFunctions(PciAddress pf) {
        List<PciAddress> out = new ArrayList<>();
        for (String name : names(pciDevice(pf.toString()), false)) {
            if (VIRTFN.matcher(name).matches()) {
                linkName(pciDevice(pf.toString()).resolve(name)).filter(PciAddress::isValid).map(PciAddress::parse)
                        .ifPresent(out::add);
            }
        }
        out.sort(null);
        return out;
    }

    /** The functions the kernel lists in an IOMMU group, sorted; empty when the group directory is unreadable. */
    List<String> groupFunctions(String group) {
        if (!isGroupName(group)) {
            return List.of();
        }
        return names(root.resolve("sys/kernel/iommu_groups").resolve(group).resolve("devices"), false);
    }

    /** The function's VFIO device cdev name ({@code vfioN}), the first such directory under {@code vfio-dev/}. */
    Optional<String> vfioCdev(String bdf) {
        if (!safe(bdf)) {
            return Optional.empty();
        }
        return names(pciDevice(bdf).resolve("vfio-dev"), true).stream()
                .filter(n -> n.startsWith("vfio")).findFirst();
    }

    /** EGM regions whose {@code /dev/egmN} node exists, sorted by name. */
    List<EgmRegion> egmRegions() {
        List<EgmRegion> out = new ArrayList<>();
        if (!exists(root.resolve("sys/class/egm"))) {
            return out;
        }
        for (String name : names(root.resolve("sys/class/egm"), false)) {
            if (!name.startsWith("egm") || !exists(root.resolve("dev").resolve(name))) {
                continue;
            }
            try {
                String text = AttributeFiles.read(root.resolve("sys/class/egm").resolve(name).resolve("gpu_devices"))
                        .strip();
                if (!text.isEmpty()) {
                    out.add(new EgmRegion(name, List.of(text.split("\\s+"))));
                }
            } catch (IOException | RuntimeException e) {
                // Unreadable regions are skipped, as the kernel may be tearing one down.
            }
        }
        return out;
    }

    /**
     * One Extended GPU Memory region.
     *
     * @param name its node name, e.g. {@code egm4} for {@code /dev/egm4}
     * @param gpus the GPU addresses listed in its {@code gpu_devices}, as written there
     */
    record EgmRegion(String name, List<String> gpus) {
        EgmRegion {
            gpus = List.copyOf(gpus);
        }
    }

    /**
     * Whether a file exists. On the default file system this is a plain {@code stat}: NIO's {@code Files.exists}
     * throws and catches an exception for every absent file, which Allocate and the health poll would pay often.
     */
    private static boolean exists(Path path) {
        return path.getFileSystem() == FileSystems.getDefault() ? path.toFile().exists() : Files.exists(path);
    }

    private Path pciDevice(String bdf) {
        return root.resolve("sys/bus/pci/devices").resolve(bdf);
    }

    private static boolean safe(String name) {
        return SAFE_NAME.matcher(name).matches() && !name.contains("..");
    }

    private static Optional<String> linkName(Path link) {
        try {
            Path target = Files.readSymbolicLink(link).getFileName();
            return target == null ? Optional.empty() : Optional.of(target.toString());
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static List<String> names(Path dir, boolean directoriesOnly) {
        List<String> out = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                if (!directoriesOnly || Files.isDirectory(entry)) {
                    out.add(entry.getFileName().toString());
                }
            }
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
        out.sort(null);
        return out;
    }
}
