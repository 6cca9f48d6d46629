package dev.vgpu.sysfs;

import dev.vgpu.core.internal.Printable;
import dev.vgpu.core.spi.Host;
import dev.vgpu.hostfiles.HostFiles;
import dev.vgpu.hostfiles.NotRegularFileException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.util.OptionalInt;

/**
 * Reads sysfs attributes and links with as few system calls as the answer needs. Every method either answers
 * or throws an {@link IOException} whose message says what was wrong; garbage content is an
 * {@link IOException} too, so callers turn any failure into one skip reason.
 */
final class SysfsFiles {

    /** Sysfs attributes are at most a page; a larger file is garbage, not something to load. */
    static final int MAX_ATTRIBUTE_BYTES = HostFiles.MAX_BYTES;

    static final Child DRIVER = new Child("driver");
    static final Child IOMMU_GROUP = new Child("iommu_group");
    static final Child PHYSFN = new Child("physfn");

    private SysfsFiles() {
    }

    /**
     * A relative path read under many device directories ({@code vendor}, {@code driver}, ...): on the default
     * file system it is parsed once, since {@code dir.resolve(String)} parses the name into a path on every call;
     * {@link #of} is exactly {@code dir.resolve(name)}.
     */
    static final class Child {
        private final String name;
        private final Path onDefault;

        Child(String name) {
            this.name = name;
            this.onDefault = FileSystems.getDefault().getPath(name);
        }

        Path of(Path dir) {
            return dir.getFileSystem() == onDefault.getFileSystem() ? dir.resolve(onDefault) : dir.resolve(name);
        }

        /**
         * {@link SysfsFiles#linkName(Path)} of this child of {@code dir}, through the host's reader of links
         * ({@link HostFiles#linkName(Path, String, dev.vgpu.hostfiles.ScanScope)}: no {@code Path} made where it reads
         * natively).
         */
        String linkName(Host host, Path dir) throws IOException {
            HostFiles files = host.files();
            return files.readsNatively(dir) ? files.linkName(dir, name, host.scanScope())
                    : SysfsFiles.linkName(of(dir));
        }

        /**
         * {@link #linkName(Host, Path, Names)} of this child of the entry {@code entry} of {@code bus}: where the native
         * reader runs, without a path for the entry.
         */
        String linkName(Host host, Path bus, String entry, Names names) throws IOException {
            HostFiles files = host.files();
            return files.readsNatively(bus)
                    ? names.lastComponent(files.linkName(bus, entry, name, host.scanScope()))
                    : linkName(host, bus.resolve(entry), names);
        }

        /** {@link #linkName(Host, Path)}, as the name {@code names} already holds when it is one of them. */
        String linkName(Host host, Path dir, Names names) throws IOException {
            HostFiles files = host.files();
            if (files.readsNatively(dir)) {
                return names.lastComponent(files.linkName(dir, name, host.scanScope()));
            }
            // java.io/NIO: the parsed child path and the text's last component without a copy when it is known
            Path link = of(dir);
            String target = Files.readSymbolicLink(link).toString();
            String known = names.lastComponent(target);
            if (known == null) {
                throw new IOException(name(link) + " link text \"" + printable(target) + "\" has no last component");
            }
            return known;
        }
    }

    /**
     * The whole content of {@code dir.resolve(name)}, a small regular file, as UTF-8, through the project's one
     * bounded reader and the scan's buffers ({@link HostFiles#read(Path, String, dev.vgpu.hostfiles.ScanScope)},
     * which makes no path on the default file system): a FIFO, socket or device node is refused without being opened.
     */
    static String read(Host host, Path dir, String name) throws IOException {
        return host.files().read(dir, name, host.scanScope());
    }

    /** {@link #read} without surrounding whitespace ({@link HostFiles#readStripped(Path, String, dev.vgpu.hostfiles.ScanScope)}). */
    static String readStripped(Host host, Path dir, String name) throws IOException {
        return host.files().readStripped(dir, name, host.scanScope());
    }

    /** The last component of a symbolic link's text, without following it (the link may dangle). */
    static String linkName(Path link) throws IOException {
        String target = Files.readSymbolicLink(link).toString();
        String name = target.substring(target.lastIndexOf('/') + 1);
        if (name.isEmpty()) {
            throw new IOException(name(link) + " link text \"" + printable(target) + "\" has no last component");
        }
        return name;
    }

    /**
     * Last components seen before, at most {@code capacity} of them (the first ones seen); thread-safe. A name
     * found here is the same text a {@code substring} would give.
     */
    static final class Names {
        private final int capacity;
        private volatile String[] known = new String[0];

        Names(int capacity) {
            this.capacity = capacity;
        }

        /** The text after the last {@code /}; null when that is empty. */
        String lastComponent(String text) {
            int from = text.lastIndexOf('/') + 1;
            int length = text.length() - from;
            if (length == 0) {
                return null;
            }
            for (String name : known) {
                if (name.length() == length && text.regionMatches(from, name, 0, length)) {
                    return name;
                }
            }
            String name = text.substring(from);
            synchronized (this) {
                String[] now = known;
                if (now.length < capacity) {
                    String[] more = java.util.Arrays.copyOf(now, now.length + 1);
                    more[now.length] = name;
                    known = more;
                }
            }
            return name;
        }
    }

    /**
     * A {@code vendor} or {@code device} id: {@code 0x} and four hex digits, surrounding whitespace ignored.
     *
     * @return the four digits in lowercase, e.g. {@code 10de}
     */
    static String hexId(Host host, Path dir, String name) throws IOException {
        String text = readStripped(host, dir, name);
        if (text.length() != 6 || text.charAt(0) != '0' || (text.charAt(1) != 'x' && text.charAt(1) != 'X')
                || !isHex(text, 2)) {
            throw new IOException(name + " is not 0x and four hex digits: \"" + printable(text) + "\"");
        }
        // NVIDIA's id is asked of every function bound to a GPU driver: the constant rather than a copy.
        return text.regionMatches(2, PciBus.NVIDIA_VENDOR, 0, 4) ? PciBus.NVIDIA_VENDOR
                : text.substring(2).toLowerCase(java.util.Locale.ROOT);
    }

    /** True when every character from {@code from} on is an ASCII hex digit. */
    static boolean isHex(String text, int from) {
        for (int i = from; i < text.length(); i++) {
            if (!isAsciiHex(text.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    /**
     * A function's NUMA node; empty when the kernel says -1, or the file is missing, unreadable or garbage.
     *
     * @throws NotRegularFileException when {@code numa_node} is a FIFO, socket or device node: not a kernel's
     *                                 file, so the device is skipped rather than guessed
     */
    static OptionalInt numaNode(Host host, Path deviceDir) throws NotRegularFileException {
        try {
            int node = Integer.parseInt(readStripped(host, deviceDir, "numa_node"));
            return node < 0 ? OptionalInt.empty() : OptionalInt.of(node);
        } catch (NotRegularFileException e) {
            throw e;
        } catch (IOException | NumberFormatException e) {
            return OptionalInt.empty();
        }
    }

    /** The IOMMU group number from the {@code iommu_group} link's last component. */
    static String iommuGroup(Host host, Path deviceDir) throws IOException {
        String group;
        try {
            group = IOMMU_GROUP.linkName(host, deviceDir);
        } catch (NoSuchFileException e) {
            throw new NoSuchFileException(e.getFile(), null, "no iommu_group link (is the IOMMU enabled?)");
        }
        if (group.length() > 10 || !isDigits(group)) {
            throw new IOException("iommu_group link names no group number: \"" + printable(group) + "\"");
        }
        return group;
    }

    /**
     * True when {@link dev.vgpu.core.PciAddress#parse} accepts the text ({@code dddd:bb:ss.f}, 4-8 domain digits,
     * slot at most 1f, function 0-7), checked without a regular expression since every function is asked.
     */
    static boolean isPciAddress(String text) {
        int n = text.length();
        int domain = n - 8;
        if (domain < 4 || domain > 8 || text.charAt(domain) != ':' || text.charAt(domain + 3) != ':'
                || text.charAt(domain + 6) != '.') {
            return false;
        }
        for (int i = 0; i < n - 2; i++) {
            if (i != domain && i != domain + 3 && i != domain + 6 && !isAsciiHex(text.charAt(i))) {
                return false;
            }
        }
        char function = text.charAt(n - 1);
        char slotHigh = text.charAt(n - 4);
        return (slotHigh == '0' || slotHigh == '1') && function >= '0' && function <= '7';
    }

    /** True when every character is an ASCII digit (true for ""): {@code chars().allMatch} without a stream. */
    static boolean isDigits(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    /** Only ASCII hex digits: {@link Character#digit} would also accept fullwidth and other Unicode digits. */
    private static boolean isAsciiHex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    /** True for a valid device id or group token: 1-63 printable ASCII characters without space, '/' or ','. */
    static boolean isToken(String text) {
        if (text.isEmpty() || text.length() > 63) {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c <= 0x20 || c >= 0x7f || c == '/' || c == ',') {
                return false;
            }
        }
        return true;
    }

    /** Why a read failed, in words, naming the file by its last component. */
    static String describe(IOException e) {
        if (!(e instanceof FileSystemException)) {
            String message = e.getMessage() == null ? "" : printable(e.getMessage());
            String kind = e instanceof SharedRead.Plain copy ? copy.kind()
                    : e.getClass() == IOException.class ? null : e.getClass().getSimpleName();
            return kind == null ? message : kind + " " + message;
        }
        FileSystemException failure = (FileSystemException) e;
        String file = failure.getFile() == null ? "a file" : printable(name(failure.getFile()));
        String reason = failure.getReason();
        if (e instanceof NoSuchFileException) {
            return reason != null ? reason : file + " is missing";
        }
        if (e instanceof NotLinkException) {
            return file + " is not a link";
        }
        if (e instanceof NotRegularFileException) {
            return file + " " + reason;
        }
        if (e instanceof AccessDeniedException) {
            return file + " cannot be read: access denied";
        }
        return file + " cannot be read: " + (reason != null ? reason : e.getClass().getSimpleName());
    }

    private static String name(Object path) {
        String text = path.toString();
        return text.substring(text.lastIndexOf('/') + 1);
    }

    /** Text safe for one log line ({@link Printable#of}): control characters escaped, cut at 80 characters. */
    static String printable(String text) {
        return Printable.of(text);
    }
}
