package dev.vgpu.sysfs;

import dev.vgpu.core.spi.AttributeFiles;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.ScanScope;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The parts of {@code sys/bus/...} walking that every source shares. The bus listing, each function's driver link
 * and its vendor id are read at most once per scan whichever sources ask ({@link SharedRead}, through the
 * {@link Host#scanScope() scan scope}); both PCI sources walk every function.
 */
final class PciBus {

    static final String PCI_DEVICES = "sys/bus/pci/devices";
    static final String MDEV_DEVICES = "sys/bus/mdev/devices";
    static final String NVIDIA_VENDOR = "10de";

    /** Driver names seen in {@code driver} links: a host has a few, and each function names one of them. */
    private static final SysfsFiles.Names DRIVER_NAMES = new SysfsFiles.Names(64);
    /**
     * The one failure of every function whose bus link dangles or whose directory vanished. Its text names no file
     * (the callers name the function), so one stackless copy serves them all: a scan keeps a failure per entry, and
     * 100,000 dangling entries each keeping their own path text did not fit the manifest's heap. Shared, so nobody
     * may modify it (no {@code addSuppressed}): the sources catch it where they ask for the driver.
     */
    private static final NoSuchFileException VANISHED = new SharedRead.NoSuchFile(null, null,
            "the function vanished or its bus link dangles");
    /** Cap of {@link #EXPECTED_ENTRIES}: a hint, never a reservation a hostile bus could inflate. */
    private static final int MAX_EXPECTED_ENTRIES = 1 << 16;
    /** How many entries the last listing of each bus ({@code [0]} PCI, {@code [1]} mdev) had, plus a margin. */
    private static final AtomicIntegerArray EXPECTED_ENTRIES = new AtomicIntegerArray(new int[] {16, 16});

    private PciBus() {
    }

    /**
     * The entries of {@code sys/bus/pci/devices}, in directory order (the scan sorts what it reports).
     *
     * @throws IOException when the host root is not a readable directory, or {@code sys/bus/pci/devices} is missing
     *                     or cannot be listed: every Linux host with PCI has it, so its absence under an existing
     *                     root is a bad mount, and keeping the last scan's devices beats withdrawing them all
     */
    static List<Entry> listPci(Host host) throws IOException {
        return list(host, PCI_DEVICES, false);
    }

    /**
     * The entries of {@code sys/bus/mdev/devices}. A host without mdev support has no {@code sys/bus/mdev} at all
     * (vendor-VFIO hosts, hosts without the driver loaded): no entries. But {@code sys/bus} itself missing means
     * sysfs is not there, and {@code sys/bus/mdev} without its {@code devices} is no layout the kernel makes; both
     * are failures.
     *
     * @throws IOException as {@link #listPci}, and in the two cases above
     */
    static List<Entry> listMdev(Host host) throws IOException {
        return list(host, MDEV_DEVICES, true);
    }

    private static List<Entry> list(Host host, String busDirectory, boolean busMayBeAbsent) throws IOException {
        Path directory = host.path(busDirectory);
        return SharedRead.once(host, new BusListing(directory),
                () -> listNow(host.root(), directory, busMayBeAbsent));
    }

    private static List<Entry> listNow(Path root, Path directory, boolean busMayBeAbsent) throws IOException {
        if (!Files.isDirectory(root)) {
            throw new NoSuchFileException(root.toString(), null, "the host root is not a readable directory");
        }
        int hint = busMayBeAbsent ? 1 : 0;
        List<Entry> found = new ArrayList<>(EXPECTED_ENTRIES.get(hint));
        try {
            if (AttributeFiles.readsNatively(directory)) {
                // Names without a Path each (core's native listing); each entry's path made once, from its name.
                for (String name : AttributeFiles.list(directory)) {
                    found.add(new Entry(directory.resolve(name), name));
                }
            } else {
                listInto(directory, found);
            }
            // Sizes the next listing: the bus changes little from one scan to the next.
            EXPECTED_ENTRIES.set(hint, Math.min(found.size() + 16, MAX_EXPECTED_ENTRIES));
        } catch (NoSuchFileException e) {
            Path bus = directory.getParent();
            if (busMayBeAbsent && !Files.exists(bus, LinkOption.NOFOLLOW_LINKS)
                    && Files.isDirectory(bus.getParent())) {
                return List.of();
            }
            throw new NoSuchFileException(directory.toString(), null, root.relativize(directory)
                    + " is missing under the host root " + root + " (is the host's /sys mounted there?)");
        }
        return Collections.unmodifiableList(found);
    }

    private static void listInto(Path directory, List<Entry> found) throws IOException {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
            for (Path entry : entries) {
                // Not cut from entry.toString(): the path would keep that text for the rest of the scan, one more
                // full path per entry, which 100,000 dangling entries cannot afford within the manifest's heap.
                found.add(new Entry(entry, entry.getFileName().toString()));
            }
        }
    }

    /**
     * One entry of a bus directory, named once per scan for every source that walks it.
     *
     * @param dir  the entry's path under the bus directory (a link to the device's directory)
     * @param name its name: a BDF, a UUID, or whatever else a hostile tree put there
     */
    record Entry(Path dir, String name) {
    }

    /**
     * The driver a function is bound to, from the {@code driver} link's last component; null when it has no
     * driver link (unbound).
     *
     * @throws NoSuchFileException when the function itself is gone (removed mid-scan, or a dangling bus link)
     * @throws IOException         when the driver entry cannot be read as a link
     */
    static String driver(Host host, Path deviceDir) throws IOException {
        return SharedRead.once(host, new DriverLink(deviceDir));
    }

    private static String driverNow(Path deviceDir) throws IOException {
        try {
            return SysfsFiles.DRIVER.linkName(deviceDir, DRIVER_NAMES);
        } catch (NoSuchFileException e) {
            if (Files.isDirectory(deviceDir)) {
                return null;
            }
            throw VANISHED;
        }
    }

    /**
     * A function's {@code vendor} id, four lowercase hex digits ({@code 10de}).
     *
     * @throws IOException when the file is missing, unreadable or not {@code 0x} and four hex digits
     */
    static String vendor(Host host, Path deviceDir) throws IOException {
        return SharedRead.once(host, new VendorId(deviceDir, host.scanScope()));
    }

    /** True when the {@code driver} link leads to a directory: a dangling link means the driver is gone. */
    static boolean driverPresent(Path deviceDir) {
        return Files.isDirectory(SysfsFiles.DRIVER.of(deviceDir));
    }

    /** The scan-scope key of a bus directory's listing. */
    record BusListing(Path directory) {
    }

    /** The scan-scope key of a function's {@code driver} link, and its read. */
    record DriverLink(Path function) implements SharedRead.Key<String> {
        @Override
        public String read() throws IOException {
            return driverNow(function);
        }
    }

    /**
     * The scan-scope key of a function's {@code vendor} file, and its read.
     *
     * @param scope the scan's scope, whose read buffer the read uses
     */
    record VendorId(Path function, ScanScope scope) implements SharedRead.Key<String> {
        @Override
        public String read() throws IOException {
            return SysfsFiles.hexId(function, "vendor", scope);
        }
    }
}
