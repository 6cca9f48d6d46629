package dev.vgpu.core.spi;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The one way this project reads a small attribute file of the host ({@code vendor}, {@code numa_node},
 * {@code nvidia/current_vgpu_type}, an mdev type's {@code name}, EGM's {@code gpu_devices}, ...): at scan time,
 * at Allocate and in health checks alike, and for custom sources that want the same guarantees.
 *
 * <ul>
 * <li><b>Regular files only.</b> A FIFO, socket, device node or directory the path resolves to (links followed)
 *     is refused with a {@link NotRegularFileException} and never read, since opening a FIFO blocks until a writer
 *     appears and reading a device such as {@code /dev/zero} never ends. The NIO reader reads the type before it
 *     opens, so it never opens such a file; the native reader (Java 22+, below) opens it non-blocking and refuses it
 *     by the type of the open descriptor, without reading.</li>
 * <li><b>Bounded.</b> At most {@value #MAX_BYTES} bytes are read; a longer file is an {@link IOException} saying
 *     so. Sysfs attributes are at most a page; the size a file reports is not trusted as a bound (sysfs reports 4096
 *     for every attribute). The native reader uses it only to stop without the read that would return 0 where the
 *     size says the content is complete (docs/BUILD.md, "The native reader's reads").</li>
 * <li><b>Loop safe.</b> A symbolic-link loop fails the type read ({@code ELOOP}) as an {@link IOException}.</li>
 * </ul>
 * Every failure is an {@link IOException} whose message names the file by its last component, so a caller can
 * turn it into one skip reason or one status description. The type questions a scan asks beside its reads
 * ({@link #isDirectory(Path, String)}, {@link #exists(Path, String, java.nio.file.LinkOption...)}) answer exactly
 * what {@link Files#isDirectory} and {@link Files#exists} answer, with one {@code fstatat(2)} where the native reader
 * runs.
 *
 * <p>Why it lives in core: both the sysfs sources (discovery, rechecks) and the device-plugin adapter (Allocate,
 * health) read host files, and the adapter must not depend on the built-in sources (that would put them on every
 * consumer's service path). The reader knows files, not sysfs semantics; parsing stays with the modules. Its one
 * file-system fact: the native reader ends a kernfs text attribute at its short first read (docs/BUILD.md, "The
 * native reader's reads").
 *
 * <p>How: on Java 22 and later, on the default file system, the native reader of this jar's multi-release classes
 * ({@code openat(2)} with {@code O_NONBLOCK}, {@code fstat(2)} of the descriptor, {@code read(2)} into a reused
 * buffer; docs/BUILD.md). On Java 17-21, {@code stat(2)} through {@link File#isFile()} (links followed, true only
 * for a regular file) and a {@link FileInputStream}, which allocate a third of what a channel does. On any other file
 * system, or when neither answers, the NIO type read and channel, which also give the exact exception.
 * Within a scan the bytes land in the scan's one buffer ({@link #read(Path, ScanScope)}).
 *
 * <p>Residual window, before Java 22: neither NIO nor {@code java.io} can open with {@code O_NONBLOCK}, so the type
 * check and the open are two steps. A
 * regular file replaced by a FIFO between them would still block the open. Sysfs itself never does that; only a
 * process that can write the host's {@code /sys} (root) could, and the scan deadline is the backstop for it.
 * Thread-safe; the only state is the read buffer a {@link ScanScope} owns for its scan.
 * <pre>{@code
 * String type = AttributeFiles.read(host.path("sys/bus/pci/devices/0000:1b:00.4/nvidia/current_vgpu_type")).strip();
 * }</pre>
 */
public final class AttributeFiles {

    /** The most bytes {@link #read} reads: sysfs attributes are at most a page, anything larger is garbage. */
    public static final int MAX_BYTES = 64 * 1024;

    private static final FileSystem DEFAULT_FILE_SYSTEM = FileSystems.getDefault();
    /** The native reader of the default file system (Java 22 and later, docs/BUILD.md); null: java.io/NIO only. */
    private static final NativeFiles NATIVE = NativeFiles.load();

    private AttributeFiles() {
    }

    /**
     * The whole content of a small regular file as UTF-8 (malformed bytes become U+FFFD), read into a buffer of
     * its own. Same as {@link #read(Path, ScanScope)} with {@link ScanScope#none()}.
     *
     * @throws NotRegularFileException when the path resolves to a FIFO, socket, device node or directory
     * @throws java.nio.file.NoSuchFileException when it is missing (or a link to it dangles)
     * @throws IOException when it is larger than {@value #MAX_BYTES} bytes or cannot be read
     */
    public static String read(Path file) throws IOException {
        return read(file, ScanScope.none(), false);
    }

    /**
     * {@link #read(Path)}, reading through the read buffer of a scan: a scan of the whole bus reads thousands of
     * attributes, and one buffer per scan (rather than one per file) is most of what a rescan would otherwise
     * allocate.
     *
     * <p>Ownership: the buffer belongs to the scope (one scan); it is lent to one read at a time and handed back
     * before this method returns, and no text refers to it. A read that finds it lent (another thread of the same
     * scan) reads into a buffer of its own, so concurrent reads are safe. Under {@link ScanScope#none()} every
     * read has a buffer of its own. Nothing outlives the scope: the next scan's scope has its own buffer.
     *
     * @param scope the scan's memo, e.g. {@code host.scanScope()}
     * @throws NotRegularFileException when the path resolves to a FIFO, socket, device node or directory
     * @throws java.nio.file.NoSuchFileException when it is missing (or a link to it dangles)
     * @throws IOException when it is larger than {@value #MAX_BYTES} bytes or cannot be read
     */
    public static String read(Path file, ScanScope scope) throws IOException {
        return read(file, scope, false);
    }

    /**
     * {@link #read(Path, ScanScope)} without surrounding whitespace: equal to {@code read(file, scope).strip()},
     * without first making the text with its trailing newline.
     *
     * @param scope the scan's memo, e.g. {@code host.scanScope()}
     * @throws NotRegularFileException when the path resolves to a FIFO, socket, device node or directory
     * @throws java.nio.file.NoSuchFileException when it is missing (or a link to it dangles)
     * @throws IOException when it is larger than {@value #MAX_BYTES} bytes or cannot be read
     */
    public static String readStripped(Path file, ScanScope scope) throws IOException {
        return read(file, scope, true);
    }

    /**
     * {@link #read(Path, ScanScope)} of {@code dir.resolve(name)}: on the default file system the file is opened by
     * its path text without making that {@link Path} (a scan reads several attributes of each device directory).
     *
     * @param name a relative path without {@code .} or {@code ..}, e.g. {@code vendor} or
     *             {@code nvidia/current_vgpu_type}
     * @param scope the scan's memo, e.g. {@code host.scanScope()}
     * @throws NotRegularFileException when the path resolves to a FIFO, socket, device node or directory
     * @throws java.nio.file.NoSuchFileException when it is missing (or a link to it dangles)
     * @throws IOException when it is larger than {@value #MAX_BYTES} bytes or cannot be read
     */
    public static String read(Path dir, String name, ScanScope scope) throws IOException {
        return read(null, dir, name, scope, false);
    }

    /**
     * {@link #read(Path, String, ScanScope)} without surrounding whitespace, as {@link #readStripped(Path, ScanScope)}.
     *
     * @param name a relative path without {@code .} or {@code ..}, e.g. {@code numa_node}
     * @param scope the scan's memo, e.g. {@code host.scanScope()}
     * @throws NotRegularFileException when the path resolves to a FIFO, socket, device node or directory
     * @throws java.nio.file.NoSuchFileException when it is missing (or a link to it dangles)
     * @throws IOException when it is larger than {@value #MAX_BYTES} bytes or cannot be read
     */
    public static String readStripped(Path dir, String name, ScanScope scope) throws IOException {
        return read(null, dir, name, scope, true);
    }

    /**
     * The last component of the text of the symbolic link {@code dir.resolve(name)}, which is not followed (it may
     * dangle): what a PCI function's {@code driver}, {@code iommu_group} or {@code physfn} link names, e.g.
     * {@code vfio-pci} for {@code ../../../bus/pci/drivers/vfio-pci}. On the default file system of Java 22 and
     * later it is read without making a {@link Path}, and a name read before (every function's driver) is the
     * string the earlier read made ({@link KnownTexts}).
     *
     * @param name a relative path without {@code .} or {@code ..}, e.g. {@code driver}
     * @throws java.nio.file.NoSuchFileException when there is no such entry
     * @throws java.nio.file.NotLinkException when it is not a symbolic link
     * @throws IOException when it cannot be read, or its text has no last component (empty, or ending in {@code /})
     */
    public static String linkName(Path dir, String name) throws IOException {
        if (NATIVE != null && dir.getFileSystem() == DEFAULT_FILE_SYSTEM) {
            String known = NATIVE.linkName(dir.toString(), name);
            if (known != null) {
                return known;
            }
        }
        return linkNameNio(dir.resolve(name));
    }

    /** The NIO way of {@link #linkName(Path, String)}: the link's whole text, then its last component. */
    private static String linkNameNio(Path link) throws IOException {
        String target = Files.readSymbolicLink(link).toString();
        int from = target.lastIndexOf('/') + 1;
        if (from == target.length()) {
            throw new IOException(name(link) + " link text \"" + dev.vgpu.core.internal.Printable.of(target)
                    + "\" has no last component");
        }
        return target.substring(from);
    }

    /**
     * {@link #linkName(Path, String)} of {@code name} in the entry {@code entry} of {@code dir}, e.g. the
     * {@code driver} link of {@code 0000:41:00.0} in {@code sys/bus/pci/devices}: where the native reader runs, the
     * three parts go into the call's path buffer one after the other, so a scan that reads every function's driver
     * makes no {@code entry/name} text for each.
     *
     * @param entry a single component, e.g. a name {@link #list} gave
     * @throws java.nio.file.NoSuchFileException when there is no such entry
     * @throws java.nio.file.NotLinkException when it is not a symbolic link
     * @throws IOException as {@link #linkName(Path, String)}
     */
    public static String linkName(Path dir, String entry, String name) throws IOException {
        if (NATIVE != null && dir.getFileSystem() == DEFAULT_FILE_SYSTEM) {
            String known = NATIVE.linkName(dir.toString(), entry, name);
            if (known != null) {
                return known;
            }
        }
        return linkNameNio(dir.resolve(entry).resolve(name));
    }

    /**
     * The names of the entries of the directory {@code dir} (without {@code .} and {@code ..}), in the order the
     * file system lists them: a bus listing without a {@link Path} per entry where the native reader runs.
     *
     * @throws java.nio.file.NoSuchFileException when the directory is missing
     * @throws java.nio.file.NotDirectoryException when it is not a directory
     * @throws IOException when it cannot be listed
     */
    public static List<String> list(Path dir) throws IOException {
        if (NATIVE != null && dir.getFileSystem() == DEFAULT_FILE_SYSTEM) {
            List<String> names = NATIVE.list(dir.toString(), null);
            if (names != null) {
                return names;
            }
        }
        return listNio(dir);
    }

    /** The NIO way of {@link #list(Path)}, which the native reader falls back to. */
    private static List<String> listNio(Path dir) throws IOException {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                names.add(entry.getFileName().toString());
            }
        }
        return Collections.unmodifiableList(names);
    }

    /**
     * {@link #list(Path)} of {@code dir.resolve(name)}, without making that {@link Path} where the native reader
     * runs (a function's {@code vfio-dev}).
     *
     * @param name a relative path without {@code .} or {@code ..}, e.g. {@code vfio-dev}
     * @throws java.nio.file.NoSuchFileException when the directory is missing
     * @throws java.nio.file.NotDirectoryException when it is not a directory
     * @throws IOException when it cannot be listed
     */
    public static List<String> list(Path dir, String name) throws IOException {
        if (NATIVE != null && dir.getFileSystem() == DEFAULT_FILE_SYSTEM) {
            List<String> names = NATIVE.list(dir.toString(), name);
            if (names != null) {
                return names;
            }
        }
        return listNio(dir.resolve(name));
    }

    /**
     * {@link Files#isDirectory Files.isDirectory(path)}: true when {@code path} is a directory, links followed;
     * false when it is anything else, missing, or cannot be asked. One {@code fstatat(2)} where the native reader runs,
     * without the attribute objects NIO makes.
     */
    public static boolean isDirectory(Path path) {
        if (NATIVE != null && path.getFileSystem() == DEFAULT_FILE_SYSTEM) {
            int type = NATIVE.type(path.toString(), null, true);
            if (type >= 0) {
                return type == NativeFiles.DIRECTORY;
            }
        }
        return Files.isDirectory(path);
    }

    /**
     * {@link #isDirectory(Path)} of {@code dir.resolve(name)}, links followed (a {@code driver} link that leads to a
     * directory is one), without making that {@link Path} where the native reader runs.
     *
     * @param name a relative path without {@code .} or {@code ..}, e.g. {@code driver}
     */
    public static boolean isDirectory(Path dir, String name) {
        if (NATIVE != null && dir.getFileSystem() == DEFAULT_FILE_SYSTEM) {
            int type = NATIVE.type(dir.toString(), name, true);
            if (type >= 0) {
                return type == NativeFiles.DIRECTORY;
            }
        }
        return Files.isDirectory(dir.resolve(name));
    }

    /**
     * {@link Files#exists Files.exists(dir.resolve(name), options)}: true when there is such a file; with
     * {@link java.nio.file.LinkOption#NOFOLLOW_LINKS} a link counts itself (a dangling one exists), otherwise links
     * are followed. False when it is missing or cannot be asked. One {@code fstatat(2)} where the native reader runs
     * (with {@code AT_SYMLINK_NOFOLLOW} for {@code NOFOLLOW_LINKS}, as {@code lstat}).
     *
     * @param name a relative path without {@code .} or {@code ..}, e.g. {@code sriov_totalvfs}
     */
    public static boolean exists(Path dir, String name, java.nio.file.LinkOption... options) {
        if (NATIVE != null && dir.getFileSystem() == DEFAULT_FILE_SYSTEM) {
            boolean follow = true;
            for (java.nio.file.LinkOption option : options) {
                follow &= option != java.nio.file.LinkOption.NOFOLLOW_LINKS;
            }
            int type = NATIVE.type(dir.toString(), name, follow);
            if (type >= 0) {
                return type != NativeFiles.MISSING;
            }
        }
        return Files.exists(dir.resolve(name), options);
    }

    /**
     * True when reads, link names and listings under {@code path} go through the native reader (Java 22 and later,
     * default file system, native access enabled): then {@link #linkName(Path, String)} and {@link #list(Path)} make
     * no {@link Path}, so a caller that already holds a parsed child path for the NIO way may choose by this.
     */
    public static boolean readsNatively(Path path) {
        return NATIVE != null && path.getFileSystem() == DEFAULT_FILE_SYSTEM;
    }

    /**
     * What reads files of the default file system on this runtime, in words (for a start line): {@code java.io/NIO},
     * or {@code native (java.lang.foreign: ...)} on Java 22 and later with native access enabled (README, "Native
     * access").
     */
    public static String implementation() {
        return NativeFiles.describe(NATIVE);
    }

    /**
     * A scan starts on the calling thread ({@link Scanner#run}): until the matching {@link #scanEnded()}, the native
     * reader keeps the descriptor of each directory this thread lists and makes the thread's calls below it relative
     * to that descriptor ({@code openat(2)}, {@code readlinkat(2)}, {@code fstatat(2)}), so the kernel walks the
     * host root's path once per listing instead of once per attribute (docs/BUILD.md, "Kept directories"). The
     * descriptors belong to this thread alone: other threads of the scan read by whole paths.
     */
    static void scanStarted() {
        if (NATIVE != null) {
            NATIVE.scanStarted();
        }
    }

    /** The scan {@link #scanStarted()} began on this thread ended: its kept descriptors are closed. */
    static void scanEnded() {
        if (NATIVE != null) {
            NATIVE.scanEnded();
        }
    }

    private static String read(Path file, ScanScope scope, boolean strip) throws IOException {
        return read(file, null, null, scope, strip);
    }

    /** Reads {@code file}, or when it is null {@code dir.resolve(name)}, made only where a Path is needed. */
    private static String read(Path file, Path dir, String name, ScanScope scope, boolean strip) throws IOException {
        if (NATIVE != null && (file != null ? file : dir).getFileSystem() == DEFAULT_FILE_SYSTEM) {
            String text = file != null ? NATIVE.read(file.toString(), null, strip)
                    : NATIVE.read(dir.toString(), name, strip);
            if (text != null) {
                return text;
            }
        }
        // Without a scan there is no owner to keep a buffer for the next read: a small one of its own.
        ReadBuffer owner = scope == ScanScope.none() ? null
                : scope.computeIfAbsent(ReadBuffer.KEY, k -> new ReadBuffer());
        byte[] buffer = owner == null ? new byte[1024] : owner.lend();
        try {
            InputStream plain = file != null ? openPlainRegularFile(file) : openPlainRegularFile(dir, name);
            if (plain != null) {
                try (plain) {
                    String text = readAll(plain, buffer, strip);
                    if (text != null) {
                        return text;
                    }
                }
            } else {
                Path target = file != null ? file : dir.resolve(name);
                BasicFileAttributes attributes = Files.readAttributes(target, BasicFileAttributes.class);
                if (!attributes.isRegularFile()) {
                    throw new NotRegularFileException(target, kind(target, attributes));
                }
                try (InputStream in = Files.newInputStream(target)) {
                    String text = readAll(in, buffer, strip);
                    if (text != null) {
                        return text;
                    }
                }
            }
            throw new IOException(name(file, dir, name) + " is larger than " + MAX_BYTES + " bytes");
        } catch (FileSystemException e) {
            throw e;
        } catch (IOException e) {
            String last = name(file, dir, name);
            throw e.getMessage() != null && e.getMessage().startsWith(last) ? e
                    : new IOException(last + " cannot be read: " + e.getMessage(), e);
        } finally {
            if (owner != null) {
                owner.giveBack(buffer);
            }
        }
    }

    /**
     * The fast way in, for a file of the default file system that {@code stat(2)} says is regular (links
     * followed): a {@link FileInputStream}, which reads straight into the array and costs a third of what a
     * channel allocates. Null whenever that does not answer (another file system, not a regular file, missing,
     * denied, gone since): the NIO way then checks and opens again and fails with the exact exception.
     */
    private static InputStream openPlainRegularFile(Path file) {
        return file.getFileSystem() != DEFAULT_FILE_SYSTEM ? null : openPlainRegularFile(file.toFile());
    }

    /** {@link #openPlainRegularFile(Path)} of {@code dir.resolve(name)}, by path text. */
    private static InputStream openPlainRegularFile(Path dir, String name) {
        if (dir.getFileSystem() != DEFAULT_FILE_SYSTEM) {
            return null;
        }
        String parent = dir.toString();
        // One concatenation (File normalizes a doubled '/'): File(parent, child) costs three times as much.
        return parent.isEmpty() ? null : openPlainRegularFile(new File(parent + '/' + name));
    }

    private static InputStream openPlainRegularFile(File plain) {
        if (!plain.isFile()) {
            return null;
        }
        try {
            return new FileInputStream(plain);
        } catch (FileNotFoundException e) {
            return null;
        }
    }

    /**
     * Reads to the end into {@code buffer}, or into larger copies of it (at most {@value #MAX_BYTES} + 1 bytes)
     * that are dropped after the read: only a file over a page needs one. Null when the file is larger than
     * {@value #MAX_BYTES} bytes.
     */
    private static String readAll(InputStream in, byte[] buffer, boolean strip) throws IOException {
        byte[] bytes = buffer;
        int length = 0;
        while (true) {
            if (length == bytes.length) {
                if (length > MAX_BYTES) {
                    return null;
                }
                bytes = Arrays.copyOf(bytes, Math.min(length * 4, MAX_BYTES + 1));
            }
            int n = in.read(bytes, length, bytes.length - length);
            if (n < 0) {
                return decode(bytes, length, strip);
            }
            length += n;
        }
    }

    /**
     * The text of {@code buffer[0, length)}; with {@code strip}, equal to {@code text.strip()}: ASCII whitespace
     * (what {@link Character#isWhitespace} says of a byte below 0x80, a whole character in UTF-8) is cut from the
     * bytes, and {@link String#strip()} then removes any other whitespace, returning the same string when there
     * is none. A short ASCII text is the string {@link KnownTexts} keeps for its bytes.
     */
    static String decode(byte[] buffer, int length, boolean strip) {
        int from = 0;
        int to = length;
        if (strip) {
            while (from < to && isAsciiWhitespace(buffer[from])) {
                from++;
            }
            while (to > from && isAsciiWhitespace(buffer[to - 1])) {
                to--;
            }
        }
        String known = KnownTexts.of(buffer, from, to);
        if (known != null) {
            return known; // ASCII only, so the cut above was all the stripping there is
        }
        String text = new String(buffer, from, to - from, StandardCharsets.UTF_8);
        return strip ? text.strip() : text;
    }

    private static boolean isAsciiWhitespace(byte b) {
        return b == ' ' || (b >= 0x09 && b <= 0x0d) || (b >= 0x1c && b <= 0x1f);
    }

    /** What a non-regular file is, in words, from the Unix mode where the file system has one. */
    private static String kind(Path file, BasicFileAttributes attributes) {
        if (attributes.isDirectory()) {
            return "a directory";
        }
        try {
            Object mode = Files.getAttribute(file, "unix:mode");
            if (mode instanceof Integer bits) {
                switch (bits & 0170000) {
                    case 0010000: return "a FIFO";
                    case 0140000: return "a socket";
                    case 0020000: return "a character device";
                    case 0060000: return "a block device";
                    default: break;
                }
            }
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            // Not every file system has Unix modes (jimfs has none); the general words below do.
        }
        return "a FIFO, socket or device node";
    }

    /** The last component of {@code file}, or of {@code dir.resolve(name)} when file is null. */
    private static String name(Path file, Path dir, String name) {
        return name(file != null ? file : dir.resolve(name));
    }

    private static String name(Path file) {
        Path last = file.getFileName();
        return last == null ? file.toString() : last.toString();
    }

    /**
     * The read buffer of one scan, kept in its {@link ScanScope} under a key private to this class. Unlike other
     * scope values it is mutable: it lends its one buffer to one read at a time (an atomic swap), so a read that
     * runs while another thread of the same scan holds it makes a buffer of its own.
     */
    private static final class ReadBuffer {

        /** The scope key: one identity, equal only to itself. */
        static final Object KEY = new Object() {
            @Override
            public String toString() {
                return "AttributeFiles.ReadBuffer";
            }
        };

        /** A sysfs attribute is at most a page; one more byte sees the end of a full page without growing. */
        private static final int SIZE = 4096 + 1;

        private final AtomicReference<byte[]> spare = new AtomicReference<>();

        byte[] lend() {
            byte[] buffer = spare.getAndSet(null);
            return buffer != null ? buffer : new byte[SIZE];
        }

        /** Keeps the buffer for the next read of the scan. */
        void giveBack(byte[] buffer) {
            spare.set(buffer);
        }
    }

    /**
     * An attribute path that resolves to something other than a regular file, which is never read. It carries no
     * stack trace: it describes the host's file, not a fault of the code that read it, and a scan may keep one per
     * device until it ends.
     */
    public static final class NotRegularFileException extends FileSystemException {

        private static final long serialVersionUID = 1L;

        /**
         * @param file the path as given
         * @param kind what it is, e.g. {@code a FIFO}
         */
        public NotRegularFileException(Path file, String kind) {
            this(file.toString(), kind);
        }

        /** The same, for a file named by its path text (the native reader makes no {@link Path}). */
        NotRegularFileException(String file, String kind) {
            super(file, null, "is " + kind + ", not a regular file");
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }
}
