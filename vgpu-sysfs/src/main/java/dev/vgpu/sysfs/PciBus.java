package dev.vgpu.sysfs;

import dev.vgpu.core.spi.Host;
import dev.vgpu.hostfiles.HostFiles;
import dev.vgpu.hostfiles.ScanScope;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The parts of {@code sys/bus/...} walking that every source shares. The bus listing, each function's driver link
 * and its vendor id are read at most once per scan whichever sources ask: the listing through the
 * {@link Host#scanScope() scan scope} ({@link SharedRead}), and the driver and vendor of a listed function in its
 * {@link Entry}, which the listing shares with every source of the scan; both PCI sources walk every function.
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
        ScanScope scope = host.scanScope();
        // Under ScanScope.none() the entries keep nothing either: each ask of a driver or vendor reads.
        BusMemo memo = scope == ScanScope.none() ? new BusMemo(host, false) : BusMemo.of(host);
        boolean index = busDirectory.equals(PCI_DEVICES);
        return SharedRead.once(host, new BusListing(directory),
                () -> listNow(host, directory, busMayBeAbsent, memo, index));
    }

    /**
     * Lists a bus directory into entries that keep their reads in {@code memo} (unless it keeps nothing); with
     * {@code index} (the PCI bus) the scan's path asks find them too ({@link BusMemo#entry}).
     */
    private static List<Entry> listNow(Host host, Path directory, boolean busMayBeAbsent, BusMemo memo,
                                       boolean index) throws IOException {
        Path root = host.root();
        HostFiles files = host.files();
        if (!Files.isDirectory(root)) {
            throw new NoSuchFileException(root.toString(), null, "the host root is not a readable directory");
        }
        List<Entry> found;
        try {
            if (files.readsNatively(directory)) {
                // Names without a Path each (the native listing, which a scan round keeps open for the reads below
                // it); an entry's path is made when a source asks.
                List<String> names = files.list(directory, host.scanScope());
                found = new ArrayList<>(names.size());
                for (String name : names) {
                    found.add(new Entry(directory, name, null, memo));
                }
            } else {
                found = new ArrayList<>();
                listInto(directory, found, memo);
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
        List<Entry> listed = Collections.unmodifiableList(found);
        if (memo.keeps() && index) {
            memo.listed(directory, listed);
        }
        return listed;
    }

    private static void listInto(Path directory, List<Entry> found, BusMemo memo) throws IOException {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
            for (Path entry : entries) {
                // Not cut from entry.toString(): the path would keep that text for the rest of the scan, one more
                // full path per entry, which 100,000 dangling entries cannot afford within the manifest's heap.
                found.add(new Entry(directory, entry.getFileName().toString(), entry, memo));
            }
        }
    }

    /**
     * One entry of a bus directory, named once per scan for every source that walks it, and the outcomes of its
     * {@code driver} link and {@code vendor} reads in that scan. Where the native reader lists, its {@link Path} is
     * made on the first {@link #dir()}: a source reads only the driver link of most functions
     * ({@link #driver(Host, Entry)}, by name), so the 4,000 functions of other vendors on a large host need no path,
     * no path text and no scope key.
     *
     * <p>Threads: the sources of one scan share the entries and may ask at once. A path is immutable and safely
     * published by its final fields, so two threads that each make one may keep either. An outcome is set once, by a
     * compare-and-set from null: a thread that loses the race drops its own read and answers the one kept, so every
     * source of the scan sees one answer (two threads may then both have read the file, which only costs the read).
     */
    static final class Entry {
        private static final VarHandle DRIVER;
        private static final VarHandle VENDOR;

        static {
            try {
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                DRIVER = lookup.findVarHandle(Entry.class, "driver", Object.class);
                VENDOR = lookup.findVarHandle(Entry.class, "vendor", Object.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final Path bus;
        private final String name;
        /**
         * The scan's bus memo, which knows the scan's host; one that keeps nothing when the listing was made under
         * {@link ScanScope#none()}.
         */
        private final BusMemo memo;
        private volatile Path dir;
        /** The driver read's outcome ({@link SharedRead.Outcome}); null before the first read. */
        @SuppressWarnings("unused") // through DRIVER
        private volatile Object driver;
        /** The vendor read's outcome; null before the first read. */
        @SuppressWarnings("unused") // through VENDOR
        private volatile Object vendor;

        Entry(Path bus, String name, Path dir, BusMemo memo) {
            this.bus = bus;
            this.name = name;
            this.dir = dir;
            this.memo = memo;
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

        private String driver() throws IOException {
            return !memo.keeps() ? driverNow(memo.host(), bus, name, dir, new BusMemo(memo.host(), false))
                    : SharedRead.Outcome.answer(kept(true));
        }

        private String vendor() throws IOException {
            return !memo.keeps() ? SysfsFiles.hexId(memo.host(), dir(), "vendor")
                    : SharedRead.Outcome.answer(kept(false));
        }

        /**
         * The outcome of the driver read ({@code driver}) or the vendor read kept in this entry, read and kept now if
         * none is (the constant handles in each branch, and no lambda: a scan asks this for every function).
         */
        private Object kept(boolean driver) {
            Object known = driver ? DRIVER.getAcquire(this) : VENDOR.getAcquire(this);
            if (known != null) {
                return known;
            }
            Object read;
            try {
                read = SharedRead.Outcome.of(driver ? driverNow(memo.host(), bus, name, dir, memo)
                        : SysfsFiles.hexId(memo.host(), dir(), "vendor"));
            } catch (IOException e) {
                read = SharedRead.Outcome.failed(e);
            }
            Object first = driver ? DRIVER.compareAndExchange(this, null, read)
                    : VENDOR.compareAndExchange(this, null, read);
            return first == null ? read : first;
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
        ScanScope scope = host.scanScope();
        Entry listed = scope == ScanScope.none() ? null : BusMemo.of(host).entry(deviceDir);
        if (listed != null) {
            return listed.driver();
        }
        return SharedRead.once(host, new DriverLink(deviceDir.getParent(), deviceDir.getFileName().toString(),
                host, deviceDir));
    }

    /**
     * {@link #driver(Host, Path)} of a bus entry, asked by its name: the same read, kept in the entry (no scope key),
     * which a path ask of the same function in the same scan answers from too.
     */
    static String driver(Host host, Entry entry) throws IOException {
        return entry.driver();
    }

    /** Reads by the entry's path where the asker has one (NIO listings, path asks), else by bus and name. */
    private static String driverNow(Host host, Path bus, String function, Path dir, BusMemo memo)
            throws IOException {
        try {
            return dir != null ? SysfsFiles.DRIVER.linkName(host, dir, memo.driverNames())
                    : SysfsFiles.DRIVER.linkName(host, bus, function, memo.driverNames());
        } catch (NoSuchFileException e) {
            HostFiles files = host.files();
            if (dir != null ? files.isDirectory(dir, host.scanScope())
                    : files.isDirectory(bus, function, host.scanScope())) {
                return null;
            }
            throw memo.vanished();
        }
    }

    /**
     * What the driver reads of one scan share, made on the first listing or driver read of the scan and dropped with
     * its scope (under {@link ScanScope#none()}, made for each read): nothing is kept from one scan or host to the
     * next.
     *
     * <p>{@code driverNames}: the driver names seen in {@code driver} links: a host has a few, and each function names
     * one of them, so the scan keeps one copy of each. {@code vanished}: the one failure of every function of the
     * scan whose bus link dangles or whose directory vanished. Its text names no file, so one stackless copy serves
     * them all: a scan keeps a failure per entry, and 100,000 dangling entries each keeping their own path text did
     * not fit the manifest's heap. Shared within the scan, so nobody may modify it (no {@code addSuppressed}): the
     * sources catch it where they ask for the driver. {@code pci}: the scan's listing of {@code sys/bus/pci/devices},
     * once made, so that a path ask of a listed function (an IOMMU group's member) answers from its entry.
     *
     * <p>Threads: the names and the failure are thread-safe; the listing and its index are each published once
     * through a volatile field (two threads that build the index at once build equal ones, either is kept).
     */
    static final class BusMemo {

        /** The scan-scope key of the memo; one value, since a scope belongs to one scan of one host. */
        private static final Object KEY = BusMemo.class;

        private final SysfsFiles.Names driverNames = new SysfsFiles.Names(64);
        private final NoSuchFileException vanished = new SharedRead.NoSuchFile(null, null, VANISHED);
        /** The most entries a listing is indexed by name for path asks. */
        static final int INDEX_LIMIT = 16_384;

        private final Host host;
        private final boolean keeps;
        private volatile Listed pci;

        BusMemo(Host host, boolean keeps) {
            this.host = host;
            this.keeps = keeps;
        }
        private volatile Map<String, Entry> index;

        /** The memo of the scan {@code host} is tied to. */
        static BusMemo of(Host host) {
            return host.scanScope().computeIfAbsent(KEY, key -> new BusMemo(host, true));
        }

        /** The host of the scan: its reader and scope, for the reads of every entry of its listings. */
        Host host() {
            return host;
        }

        /** Whether reads are kept; false for a listing made under {@link ScanScope#none()}. */
        boolean keeps() {
            return keeps;
        }

        SysfsFiles.Names driverNames() {
            return driverNames;
        }

        NoSuchFileException vanished() {
            return vanished;
        }

        /** The scan's listing of {@code sys/bus/pci/devices}: where it is and what it holds. */
        private record Listed(Path directory, List<Entry> entries) {
        }

        /** Keeps the scan's PCI listing (the mdev bus is walked by path alone). */
        void listed(Path directory, List<Entry> entries) {
            pci = new Listed(directory, entries);
        }

        /**
         * The listed entry of the function at {@code deviceDir}; null when the scan has not listed it, or when the
         * listing is larger than {@value #INDEX_LIMIT} entries (no real host has that many PCI functions; a hostile
         * tree's 100,000 dangling entries get no index in the manifest's heap): a path ask then keeps its read in the
         * scan scope, apart from the entry's.
         */
        Entry entry(Path deviceDir) {
            Listed listed = pci;
            if (listed == null || listed.entries().size() > INDEX_LIMIT
                    || !listed.directory().equals(deviceDir.getParent())) {
                return null;
            }
            Map<String, Entry> byName = index;
            if (byName == null) {
                byName = new HashMap<>(listed.entries().size() * 4 / 3 + 1);
                for (Entry entry : listed.entries()) {
                    byName.put(entry.name(), entry);
                }
                index = byName;
            }
            Path last = deviceDir.getFileName();
            return last == null ? null : byName.get(last.toString());
        }
    }

    /**
     * A function's {@code vendor} id, four lowercase hex digits ({@code 10de}).
     *
     * @throws IOException when the file is missing, unreadable or not {@code 0x} and four hex digits
     */
    static String vendor(Host host, Path deviceDir) throws IOException {
        ScanScope scope = host.scanScope();
        Entry listed = scope == ScanScope.none() ? null : BusMemo.of(host).entry(deviceDir);
        if (listed != null) {
            return listed.vendor();
        }
        return SharedRead.once(host, new VendorId(deviceDir, host));
    }

    /** {@link #vendor(Host, Path)} of a bus entry: kept in the entry, which path asks in the same scan share. */
    static String vendor(Host host, Entry entry) throws IOException {
        return entry.vendor();
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
     * {@code fstatat} by name; otherwise NIO with the function's cached child path ({@code HostFiles}' own NIO way
     * would resolve a new one each time).
     */
    static boolean driverPresent(Host host, Path deviceDir) {
        HostFiles files = host.files();
        return files.readsNatively(deviceDir) ? files.isDirectory(deviceDir, "driver", host.scanScope())
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
        /** The scan's host: its reader reads, its scope (which holds the scan's {@link BusMemo}) is part of the key. */
        private final Host host;
        private final Path dir;

        /**
         * @param bus      the bus directory the function is an entry of
         * @param function the entry's name
         * @param host     the scan's host
         */
        DriverLink(Path bus, String function, Host host) {
            this(bus, function, host, null);
        }

        private DriverLink(Path bus, String function, Host host, Path dir) {
            this.bus = bus;
            this.function = function;
            this.host = host;
            this.dir = dir;
        }

        String function() {
            return function;
        }

        @Override
        String read() throws IOException {
            return driverNow(host, bus, function, dir, host.scanScope() == ScanScope.none() ? new BusMemo(host, false)
                    : BusMemo.of(host));
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof DriverLink link && function.equals(link.function) && bus.equals(link.bus)
                    && host.scanScope().equals(link.host.scanScope());
        }

        @Override
        public int hashCode() {
            return (bus.hashCode() * 31 + function.hashCode()) * 31 + host.scanScope().hashCode();
        }

        @Override
        public String toString() {
            return "DriverLink[" + bus + "/" + function + "]";
        }
    }

    /** The scan-scope key of a function's {@code vendor} file, its read and its outcome. */
    static final class VendorId extends SharedRead.Memo<String> {
        private final Path function;
        /** The scan's host: its reader reads (with the scope's buffers), its scope is part of the key. */
        private final Host host;

        /** @param host the scan's host */
        VendorId(Path function, Host host) {
            this.function = function;
            this.host = host;
        }

        @Override
        String read() throws IOException {
            return SysfsFiles.hexId(host, function, "vendor");
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof VendorId id && function.equals(id.function)
                    && host.scanScope().equals(id.host.scanScope());
        }

        @Override
        public int hashCode() {
            return function.hashCode() * 31 + host.scanScope().hashCode();
        }

        @Override
        public String toString() {
            return "VendorId[" + function + "]";
        }
    }
}
