package dev.vgpu.attach.internal;

import dev.vgpu.core.spi.Host;
import java.io.File;
import java.io.IOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The VFIO, IOMMU and EGM facts of a host that a handover reads, always under the host root (docs/HOST-FACTS.md
 * §1a, §3). Not API: exported only to the built-in sources, which record a function's VFIO cdev with
 * {@link #vfioCdev(Host, Path)}, the one lookup a handover uses too.
 *
 * <p>Stateless and thread-safe; every method reads the file system anew, but {@link #groupListing}, which reads once
 * per scope. Links are read with {@code readlink}
 * and only their last path component is used, as the kernel's relative links require. Files are read only through
 * the host's {@link dev.vgpu.hostfiles.HostFiles} (regular files, at most 64 KiB), the same reader discovery uses.
 */
public final class HostVfio {

    private static final Pattern GROUP = Pattern.compile("[0-9]{1,10}");
    private static final Pattern SAFE_NAME = Pattern.compile("[A-Za-z0-9:._-]{1,63}");
    private static final String CDEV_PREFIX = "vfio";
    /** The kernel names a cdev {@code vfio%d}; ten digits hold every {@code int} it could print. */
    private static final int MAX_CDEV_DIGITS = 10;

    private final Host host;
    private final Path root;

    /** Reads under the host's root, the directory that stands for its {@code /}, with its reader. */
    public HostVfio(Host host) {
        this.host = host;
        this.root = host.root();
    }

    /** True for an IOMMU group name the kernel could have made (decimal), so it is safe in a path. */
    public static boolean isGroupName(String group) {
        return GROUP.matcher(group).matches();
    }

    /**
     * The VFIO device cdev of the PCI function whose sysfs directory is {@code functionDir}: the entry of its
     * {@code vfio-dev/} named {@code vfio} and 1-10 decimal digits with the smallest number; empty when there is
     * none or the directory cannot be listed. Discovery records it and a handover hands out
     * {@code /dev/vfio/devices/<it>}, so both must give one answer on any tree. Other names are never taken (a
     * name with a space or a newline would be a device path nobody asked for), and the entry's type is not
     * checked: the kernel makes only directories there, and a stat per function would cost every scan.
     */
    public static Optional<String> vfioCdev(Host host, Path functionDir) {
        String best = null;
        String parent = functionDir.toString();
        if (!host.files().readsNatively(functionDir) && functionDir.getFileSystem() == FileSystems.getDefault()
                && !parent.isEmpty()) {
            // java.io lists names without a Path, a stream and its lock per entry; it answers null on any failure,
            // as the listing below fails, and leaves out "." and "..", which the name rule refuses anyway.
            String[] names = new File(parent + "/vfio-dev").list();
            if (names == null) {
                return Optional.empty();
            }
            for (String name : names) {
                best = lowerCdev(name, best);
            }
            return Optional.ofNullable(best);
        }
        // The host's listing: native where it runs (no Path per entry, and no fstat of the open directory as
        // opendir(3) makes), else NIO's (another file system, such as a test's jimfs).
        try {
            for (String name : host.files().list(functionDir, "vfio-dev", host.scanScope())) {
                best = lowerCdev(name, best);
            }
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
        return Optional.ofNullable(best);
    }

    /** True for {@code vfio} followed by 1-10 ASCII digits, the names the kernel gives VFIO cdevs. */
    static boolean isCdevName(String name) {
        int digits = name.length() - CDEV_PREFIX.length();
        if (digits < 1 || digits > MAX_CDEV_DIGITS || !name.startsWith(CDEV_PREFIX)) {
            return false;
        }
        for (int i = CDEV_PREFIX.length(); i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    private static String lowerCdev(String name, String best) {
        if (!isCdevName(name)) {
            return best;
        }
        return best == null || number(name) < number(best) ? name : best;
    }

    private static long number(String cdev) {
        return Long.parseLong(cdev, CDEV_PREFIX.length(), cdev.length(), 10);
    }

    /** Whether {@code /dev/iommu} exists, i.e. the VFIO device cdevs (iommufd) are usable. */
    public boolean iommufd() {
        return exists(root.resolve("dev/iommu"));
    }

    /** Whether {@code /dev/vfio/<group>} exists. */
    public boolean groupNodePresent(String group) {
        return isGroupName(group) && exists(root.resolve("dev/vfio").resolve(group));
    }

    /** The IOMMU group of a PCI function from its {@code iommu_group} link, empty when unreadable. */
    public Optional<String> pciIommuGroup(String bdf) {
        return safe(bdf) ? linkName(pciDevice(bdf).resolve("iommu_group")) : Optional.empty();
    }

    /** The IOMMU group of a mediated device from its {@code iommu_group} link, empty when unreadable. */
    public Optional<String> mdevIommuGroup(String uuid) {
        return safe(uuid) ? linkName(root.resolve("sys/bus/mdev/devices").resolve(uuid).resolve("iommu_group"))
                : Optional.empty();
    }

    /**
     * The functions the kernel lists in an IOMMU group ({@link #groupListing}), sorted; empty when the group's
     * {@code devices/} cannot be listed or the name is no group name.
     */
    public static List<String> groupFunctions(Host host, String group) {
        if (!isGroupName(group) || !(groupListing(host, group) instanceof GroupListing.Listed listed)) {
            return List.of();
        }
        List<String> sorted = new ArrayList<>(listed.names());
        sorted.sort(null);
        return sorted;
    }

    /**
     * What {@code sys/kernel/iommu_groups/<group>/devices} lists, in directory order, or why it cannot be listed;
     * read once per {@link Host#scanScope() scope}, so that a source judging the group and a handover checking its
     * members list it once between them.
     *
     * @param group a decimal group name ({@link #isGroupName})
     */
    public static GroupListing groupListing(Host host, String group) {
        return host.scanScope().computeIfAbsent(new GroupListingKey(
                host.path("sys/kernel/iommu_groups").resolve(group).resolve("devices")), HostVfio::list);
    }

    /** A group's member listing: the names, or the failure of listing them. */
    public sealed interface GroupListing permits GroupListing.Listed, GroupListing.Unlisted {

        /**
         * The entries' names, in directory order.
         *
         * @param names the names
         */
        record Listed(List<String> names) implements GroupListing {
            /** Copies the list. */
            public Listed {
                names = List.copyOf(names);
            }
        }

        /**
         * The directory cannot be listed.
         *
         * @param failure why: a {@link java.nio.file.NoSuchFileException} when it is missing
         */
        record Unlisted(IOException failure) implements GroupListing {
        }
    }

    private record GroupListingKey(Path devices) {
    }

    private static GroupListing list(GroupListingKey key) {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(key.devices())) {
            for (Path entry : entries) {
                names.add(entry.getFileName().toString());
            }
        } catch (IOException e) {
            return new GroupListing.Unlisted(e);
        } catch (DirectoryIteratorException e) {
            return new GroupListing.Unlisted(e.getCause());
        }
        return new GroupListing.Listed(names);
    }

    /** The VFIO device cdev of the function at {@code bdf} ({@link #vfioCdev(Host, Path)}). */
    public Optional<String> vfioCdev(String bdf) {
        return safe(bdf) ? vfioCdev(host, pciDevice(bdf)) : Optional.empty();
    }

    /** EGM regions whose {@code /dev/egmN} node exists, sorted by name. */
    public List<EgmRegion> egmRegions() {
        List<EgmRegion> out = new ArrayList<>();
        Path regions = root.resolve("sys/class/egm");
        if (!exists(regions)) {
            return out;
        }
        for (String name : names(regions)) {
            if (!name.startsWith("egm") || !exists(root.resolve("dev").resolve(name))) {
                continue;
            }
            try {
                String text = host.files().read(regions.resolve(name).resolve("gpu_devices")).strip();
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
    public record EgmRegion(String name, List<String> gpus) {
        /** Copies the list. */
        public EgmRegion {
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

    private static List<String> names(Path dir) {
        List<String> out = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                out.add(entry.getFileName().toString());
            }
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
        out.sort(null);
        return out;
    }
}
