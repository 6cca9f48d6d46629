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

/**
 * The parts of {@code sys/bus/...} walking that every source shares. The bus listing, each function's driver link
 * and its vendor id are read at most once per scan whichever sources ask ({@link SharedRead}, through the
 * {@link Host#scanScope() scan scope}); both PCI sources walk every function.
 */
final class PciBus {

    static final String PCI_DEVICES = "sys/bus/pci/devices";
    static final String MDEV_DEVICES = "sys/bus/mdev/devices";
    static final String NVIDIA_VENDOR = "10de";

    /** The reason of {@link BusMemo#vanished}: it names no file, since the callers name the function. */
    private static final String VANISHED = "the function vanished or its bus link dangles";

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
        List<Entry> found;
        try {
            if (AttributeFiles.readsNatively(directory)) {
                // Names without a Path each (core's native listing); an entry's path is made when a source asks.
                List<String> names = AttributeFiles.list(directory);
                found = new ArrayList<>(names.size());
                for (String name : names) {
                    found.add(new Entry(directory, name, null));
                }
            } else {
                found = new ArrayList<>();
                listInto(directory, found);
            }
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
                found.add(new Entry(directory, entry.getFileName().toString(), entry));
            }
        }
    }

    /**
     * One entry of a bus directory, named once per scan for every source that walks it. Where the native reader
     * lists, its {@link Path} is made on the first {@link #dir()}: a source reads only the driver link of most
     * functions ({@link #driver(Host, Entry)}, by name), so the 4,000 functions of other vendors on a large host
     * need no path and no path text.
     *
     * <p>Threads: the sources of one scan share the entries and may ask {@link #dir()} or the driver at once; each
     * then makes an equal path or driver key and either one is kept (a path is immutable and safely published by its
     * final fields; the scope answers every equal key with the one it filled).
     */
    static final class Entry {
        private final Path bus;
        private final String name;
        private volatile Path dir;
        /** The key of its driver read in the scan that listed it, made on the first ask. */
        private volatile DriverLink driverKey;

        Entry(Path bus, String name, Path dir) {
            this.bus = bus;
            this.name = name;
            this.dir = dir;
        }

        /** The entry's path under the bus directory (a link to the device's directory). */
        Path dir() {
            Path made = dir;
            if (made == null) {
                made = bus.resolve(name);
                dir = made;
            }
            return made;
        }

        /** Its name: a BDF, a UUID, or whatever else a hostile tree put there. */
        String name() {
            return name;
        }
    }

    /**
     * The driver a function is bound to, from the {@code driver} link's last component; null when it has no
     * driver link (unbound).
     *
     * @throws NoSuchFileException when the function itself is gone (removed mid-scan, or a dangling bus link)
     * @throws IOException         when the driver entry cannot be read as a link
     */
    static String driver(Host host, Path deviceDir) throws IOException {
        return SharedRead.once(host, new DriverLink(deviceDir.getParent(), deviceDir.getFileName().toString(),
                host.scanScope(), deviceDir));
    }

    /**
     * {@link #driver(Host, Path)} of a bus entry, asked by its name: the same read, shared with path asks. The
     * entry keeps its key, so the second source that asks makes none.
     */
    static String driver(Host host, Entry entry) throws IOException {
        ScanScope scope = host.scanScope();
        if (scope == ScanScope.none()) {
            return SharedRead.once(host, new DriverLink(entry.bus, entry.name, scope, entry.dir));
        }
        DriverLink key = entry.driverKey;
        if (key == null || key.scope != scope) {
            key = new DriverLink(entry.bus, entry.name, scope, entry.dir);
            entry.driverKey = key; // two sources at once may each make one: equal keys, either is kept
        }
        return SharedRead.once(host, key);
    }

    /** Reads by the entry's path where the asker has one (NIO listings, path asks), else by bus and name. */
    private static String driverNow(DriverLink link, BusMemo memo) throws IOException {
        Path dir = link.dir;
        try {
            return dir != null ? SysfsFiles.DRIVER.linkName(dir, memo.driverNames())
                    : SysfsFiles.DRIVER.linkName(link.bus, link.function, memo.driverNames());
        } catch (NoSuchFileException e) {
            if (dir != null ? AttributeFiles.isDirectory(dir) : AttributeFiles.isDirectory(link.bus, link.function)) {
                return null;
            }
            throw memo.vanished();
        }
    }

    /**
     * What the driver reads of one scan share, made on the first driver read of the scan and dropped with its scope
     * (under {@link ScanScope#none()}, made for each read): nothing is kept from one scan or host to the next.
     *
     * @param driverNames the driver names seen in {@code driver} links: a host has a few, and each function names one
     *                    of them, so the scan keeps one copy of each
     * @param vanished    the one failure of every function of the scan whose bus link dangles or whose directory
     *                    vanished. Its text names no file, so one stackless copy serves them all: a scan keeps a
     *                    failure per entry, and 100,000 dangling entries each keeping their own path text did not fit
     *                    the manifest's heap. Shared within the scan, so nobody may modify it (no
     *                    {@code addSuppressed}): the sources catch it where they ask for the driver
     */
    private record BusMemo(SysfsFiles.Names driverNames, NoSuchFileException vanished) {

        /** The scan-scope key of the memo; one value, since a scope belongs to one scan of one host. */
        private static final Object KEY = BusMemo.class;

        static BusMemo of(ScanScope scope) {
            return scope.computeIfAbsent(KEY, key -> new BusMemo(new SysfsFiles.Names(64),
                    new SharedRead.NoSuchFile(null, null, VANISHED)));
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

    /**
     * The PCI root complex a function sits under, {@code pci<domain>:<bus>} (e.g. {@code pci0000:40}): the first
     * component of that form in the text of its bus entry's link ({@code sys/bus/pci/devices/<bdf> ->
     * ../../../devices/pci0000:40/0000:40:01.1/0000:41:00.0}), as the kubelet plugin helper derives the standard
     * {@code resource.kubernetes.io/pcieRoot} attribute. Null when the entry is no link or names no root complex
     * (only a hand-made tree does that): the attribute is then left out, never guessed.
     */
    static String pcieRoot(Path busEntry) {
        String text;
        try {
            text = Files.readSymbolicLink(busEntry).toString();
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
        for (String component : text.split("/")) {
            if (PCIE_ROOT.matcher(component).matches()) {
                return component.toLowerCase(java.util.Locale.ROOT);
            }
        }
        return null;
    }

    private static final java.util.regex.Pattern PCIE_ROOT =
            java.util.regex.Pattern.compile("pci[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}");

    /**
     * True when the {@code driver} link leads to a directory: a dangling link means the driver is gone. Natively one
     * {@code fstatat} by name; otherwise NIO with the function's cached child path ({@code AttributeFiles}' own NIO
     * way would resolve a new one each time).
     */
    static boolean driverPresent(Path deviceDir) {
        return AttributeFiles.readsNatively(deviceDir) ? AttributeFiles.isDirectory(deviceDir, "driver")
                : Files.isDirectory(SysfsFiles.DRIVER.of(deviceDir));
    }

    /** The scan-scope key of a bus directory's listing. */
    record BusListing(Path directory) {
    }

    /**
     * The scan-scope key of a function's {@code driver} link, and its read: equal for equal bus, entry name and
     * scope, whether it was asked by entry or by path. The entry's path, where the asker had one, is no part of the
     * key; the read uses it rather than making another.
     */
    static final class DriverLink extends SharedRead.Memo<String> {
        private final Path bus;
        private final String function;
        private final ScanScope scope;
        private final Path dir;

        /**
         * @param bus      the bus directory the function is an entry of
         * @param function the entry's name
         * @param scope    the scan's scope, which holds the scan's {@link BusMemo}
         */
        DriverLink(Path bus, String function, ScanScope scope) {
            this(bus, function, scope, null);
        }

        private DriverLink(Path bus, String function, ScanScope scope, Path dir) {
            this.bus = bus;
            this.function = function;
            this.scope = scope;
            this.dir = dir;
        }

        String function() {
            return function;
        }

        @Override
        String read() throws IOException {
            return driverNow(this, BusMemo.of(scope));
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof DriverLink link && function.equals(link.function) && bus.equals(link.bus)
                    && scope.equals(link.scope);
        }

        @Override
        public int hashCode() {
            return (bus.hashCode() * 31 + function.hashCode()) * 31 + scope.hashCode();
        }

        @Override
        public String toString() {
            return "DriverLink[" + bus + "/" + function + "]";
        }
    }

    /** The scan-scope key of a function's {@code vendor} file, its read and its outcome. */
    static final class VendorId extends SharedRead.Memo<String> {
        private final Path function;
        private final ScanScope scope;

        /** @param scope the scan's scope, whose read buffer the read uses */
        VendorId(Path function, ScanScope scope) {
            this.function = function;
            this.scope = scope;
        }

        @Override
        String read() throws IOException {
            return SysfsFiles.hexId(function, "vendor", scope);
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof VendorId id && function.equals(id.function) && scope.equals(id.scope);
        }

        @Override
        public int hashCode() {
            return function.hashCode() * 31 + scope.hashCode();
        }

        @Override
        public String toString() {
            return "VendorId[" + function + "]";
        }
    }
}
