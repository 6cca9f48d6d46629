package dev.vgpu.hostfiles;

import dev.vgpu.hostfiles.internal.FileReader;
import dev.vgpu.hostfiles.internal.FileReaderProvider;
import dev.vgpu.hostfiles.internal.KnownTexts;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one way this project reads the small files of a host ({@code vendor}, {@code numa_node},
 * {@code nvidia/current_vgpu_type}, an mdev type's {@code name}, EGM's {@code gpu_devices}, links such as
 * {@code driver}, bus listings): at scan time, at Allocate and in health checks alike, and for custom sources that want
 * the same guarantees. Core's {@code Host} carries one to every source ({@code host.files()}).
 *
 * <ul>
 * <li><b>Regular files only.</b> A FIFO, socket, device node or directory the path resolves to (links followed)
 *     is refused with a {@link NotRegularFileException} and never read, since opening a FIFO blocks until a writer
 *     appears and reading a device such as {@code /dev/zero} never ends. The NIO way reads the type before it
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
 * ({@link #isDirectory(Path, String, ScanScope)}, {@link #exists}) answer exactly what {@link Files#isDirectory} and
 * {@link Files#exists} answer, with one {@code fstatat(2)} where the native reader runs.
 *
 * <p>Which reader: {@link #load()} asks every reader provider on the class path or module path
 * ({@link java.util.ServiceLoader}), as grpc-java chooses its transports: each says whether it can run here and its
 * priority, and the available one with the highest priority reads files of the default file system; this module's
 * own is the system-call reader of its Java 22 classes ({@code openat(2)} with {@code O_NONBLOCK}, {@code fstat(2)}
 * of the descriptor, {@code read(2)} into a reused buffer; docs/BUILD.md), available on Linux with native access.
 * Without one, and on any other file system (jimfs in tests), {@code stat(2)} through {@link File#isFile()} and a
 * {@link FileInputStream} (a third of what a channel allocates), else the NIO type read and channel, which also give
 * the exact exception; so does the native reader's every "cannot say" (a rare error, a path that is not ASCII).
 * {@link #nio()} never reads natively.
 *
 * <p>Residual window without the native reader: neither NIO nor {@code java.io} can open with {@code O_NONBLOCK}, so
 * the type check and the open are two steps. A regular file replaced by a FIFO between them would still block the
 * open. Sysfs itself never does that; only a process that can write the host's {@code /sys} (root) could, and the
 * scan deadline is the backstop for it.
 *
 * <p>State and threads: an instance is safe for any number of threads and holds no process-wide state. It owns its
 * table of known short texts (a rescan gets the strings the last scan made), and its idle native readers. Buffers
 * belong to the scope a read is given: a {@link ScanRound} holds one native reader for its thread for the whole scan
 * and a read buffer for the NIO way; a fresh {@link ScanScope} the read buffer; under {@link ScanScope#none()} a read
 * borrows an idle reader, or makes a small buffer of its own. Make one per process (or per host root) and hand it on
 * through {@code Host}: a new instance starts with empty tables.
 * <pre>{@code
 * HostFiles files = HostFiles.load();
 * String type = files.readStripped(devices.resolve("0000:1b:00.4"), "nvidia/current_vgpu_type", scope);
 * }</pre>
 */
public final class HostFiles {

    /** The most bytes a read reads: sysfs attributes are at most a page, anything larger is garbage. */
    public static final int MAX_BYTES = FileReader.MAX_BYTES;

    private static final Logger LOG = LoggerFactory.getLogger(HostFiles.class);
    private static final FileSystem DEFAULT_FILE_SYSTEM = FileSystems.getDefault();
    private static final String NIO = "java.io/NIO";

    private final KnownTexts texts = new KnownTexts();
    /** The idle readers of the chosen provider; null: java.io/NIO only. */
    private final ReaderPool pool;
    private final String description;

    private HostFiles(FileReaderProvider provider, String description) {
        this.pool = provider == null ? null : new ReaderPool(provider, texts);
        this.description = description;
    }

    /**
     * The best reader this process has: the available provider with the highest priority, else {@code java.io}/NIO
     * alone. A provider that fails to load is logged and passed over. Each call makes a new instance with empty
     * tables: call it once and hand the instance on.
     */
    public static HostFiles load() {
        FileReaderProvider best = null;
        List<String> passedOver = new ArrayList<>();
        ServiceLoader<FileReaderProvider> loader = ServiceLoader.load(FileReaderProvider.class,
                HostFiles.class.getClassLoader());
        var providers = loader.iterator();
        while (true) {
            FileReaderProvider provider;
            try {
                if (!providers.hasNext()) {
                    break;
                }
                provider = providers.next();
            } catch (ServiceConfigurationError e) {
                LOG.warn("A host file reader provider cannot be loaded and is passed over: {}", e.getMessage());
                continue;
            }
            if (!provider.isAvailable()) {
                passedOver.add(provider.describe());
            } else if (best == null || provider.priority() > best.priority()) {
                best = provider;
            }
        }
        if (best != null) {
            return new HostFiles(best, best.describe());
        }
        String why = passedOver.isEmpty() ? "no native reader provider found" : String.join("; ", passedOver);
        LOG.debug("Reading host files through {}, not natively: {}", NIO, why);
        return new HostFiles(null, NIO + " (" + why + ")");
    }

    /** {@code java.io}/NIO alone, whatever the runtime offers (for comparisons, and where native calls are unwanted). */
    public static HostFiles nio() {
        return new HostFiles(null, NIO);
    }

    /**
     * What reads files of the default file system, in words (for a start line): {@code java.io/NIO} (with why not
     * natively), or {@code native (java.lang.foreign: ...)} on Java 22 and later with native access enabled (README,
     * "Native access").
     */
    public String describe() {
        return description;
    }

    @Override
    public String toString() {
        return "HostFiles[" + description + "]";
    }

    /**
     * True when reads, link names and listings under {@code path} go through the native reader (default file system,
     * a native provider in use): then {@link #linkName} and {@link #list} make no {@link Path}, so a caller that
     * already holds a parsed child path for the NIO way may choose by this.
     */
    public boolean readsNatively(Path path) {
        return pool != null && path.getFileSystem() == DEFAULT_FILE_SYSTEM;
    }

    /**
     * A scope for one scan that the calling thread runs from start to end and closes ({@link ScanRound}): reads of
     * that thread through this instance keep the descriptors of the directories they list until it closes.
     *
     * @param expectedKeys about how many keys the scan will memoize (the last scan's count): sizes its map
     */
    public ScanRound openRound(int expectedKeys) {
        return new ScanRound(this, expectedKeys);
    }

    /** Takes back the reader a closing round held. */
    void giveBack(FileReader reader) {
        pool.giveBack(reader);
    }

    /** The reader of a round whose owner calls, else one borrowed from the pool (given back by {@link #done}). */
    private FileReader reader(ScanScope scope) {
        if (scope instanceof ScanRound round) {
            FileReader held = round.readerFor(this, pool);
            if (held != null) {
                return held;
            }
        }
        return pool.borrow();
    }

    /** Gives back a reader {@link #reader} borrowed; a round's stays with it. */
    private void done(ScanScope scope, FileReader reader) {
        if (!(scope instanceof ScanRound round) || round.readerFor(this, pool) != reader) {
            pool.giveBack(reader);
        }
    }

    /**
     * The whole content of a small regular file as UTF-8 (malformed bytes become U+FFFD), read into a buffer of
     * its own. Same as {@link #read(Path, ScanScope)} with {@link ScanScope#none()}.
     *
     * @throws NotRegularFileException when the path resolves to a FIFO, socket, device node or directory
     * @throws java.nio.file.NoSuchFileException when it is missing (or a link to it dangles)
     * @throws IOException when it is larger than {@value #MAX_BYTES} bytes or cannot be read
     */
    public String read(Path file) throws IOException {
        return read(file, null, null, ScanScope.none(), false);
    }

    /**
     * {@link #read(Path)}, reading through the buffers of a scan: a scan of the whole bus reads thousands of
     * attributes, and one buffer per scan (rather than one per file) is most of what a rescan would otherwise
     * allocate.
     *
     * <p>Ownership: the buffers belong to the scope (one scan); each is lent to one read at a time and handed back
     * before this method returns, and no text refers to it. A read that finds it lent (another thread of the same
     * scan) reads into a buffer of its own, so concurrent reads are safe. Nothing outlives the scope: the next scan's
     * scope has its own.
     *
     * @param scope the scan's memo, e.g. {@code host.scanScope()}
     * @throws NotRegularFileException when the path resolves to a FIFO, socket, device node or directory
     * @throws java.nio.file.NoSuchFileException when it is missing (or a link to it dangles)
     * @throws IOException when it is larger than {@value #MAX_BYTES} bytes or cannot be read
     */
    public String read(Path file, ScanScope scope) throws IOException {
        return read(file, null, null, scope, false);
    }

    /**
     * {@link #read(Path, ScanScope)} without surrounding whitespace: equal to {@code read(file, scope).strip()},
     * without first making the text with its trailing newline.
     *
     * @throws NotRegularFileException when the path resolves to a FIFO, socket, device node or directory
     * @throws IOException as {@link #read(Path, ScanScope)}
     */
    public String readStripped(Path file, ScanScope scope) throws IOException {
        return read(file, null, null, scope, true);
    }

    /**
     * {@link #read(Path, ScanScope)} of {@code dir.resolve(name)}: on the default file system the file is opened by
     * its path text without making that {@link Path} (a scan reads several attributes of each device directory).
     *
     * @param name a relative path without {@code .} or {@code ..}, e.g. {@code vendor} or
     *             {@code nvidia/current_vgpu_type}
     * @throws NotRegularFileException when the path resolves to a FIFO, socket, device node or directory
     * @throws IOException as {@link #read(Path, ScanScope)}
     */
    public String read(Path dir, String name, ScanScope scope) throws IOException {
        return read(null, dir, name, scope, false);
    }

    /**
     * {@link #read(Path, String, ScanScope)} without surrounding whitespace, as {@link #readStripped(Path, ScanScope)}.
     *
     * @param name a relative path without {@code .} or {@code ..}, e.g. {@code numa_node}
     * @throws NotRegularFileException when the path resolves to a FIFO, socket, device node or directory
     * @throws IOException as {@link #read(Path, ScanScope)}
     */
    public String readStripped(Path dir, String name, ScanScope scope) throws IOException {
        return read(null, dir, name, scope, true);
    }

    /**
     * The last component of the text of the symbolic link {@code dir.resolve(name)}, which is not followed (it may
     * dangle): what a PCI function's {@code driver}, {@code iommu_group} or {@code physfn} link names, e.g.
     * {@code vfio-pci} for {@code ../../../bus/pci/drivers/vfio-pci}. Where the native reader runs it is read
     * without making a {@link Path}, and a name read before (every function's driver) is the string the earlier read
     * made.
     *
     * @param name a relative path without {@code .} or {@code ..}, e.g. {@code driver}
     * @throws java.nio.file.NoSuchFileException when there is no such entry
     * @throws java.nio.file.NotLinkException when it is not a symbolic link
     * @throws IOException when it cannot be read, or its text has no last component (empty, or ending in {@code /})
     */
    public String linkName(Path dir, String name, ScanScope scope) throws IOException {
        if (readsNatively(dir)) {
            FileReader reader = reader(scope);
            try {
                String known = reader.linkName(dir.toString(), null, name);
                if (known != null) {
                    return known;
                }
            } finally {
                done(scope, reader);
            }
        }
        return linkNameNio(dir.resolve(name));
    }

    /**
     * {@link #linkName(Path, String, ScanScope)} of {@code name} in the entry {@code entry} of {@code dir}, e.g. the
     * {@code driver} link of {@code 0000:41:00.0} in {@code sys/bus/pci/devices}: where the native reader runs, the
     * three parts go into the call's path buffer one after the other, so a scan that reads every function's driver
     * makes no {@code entry/name} text for each.
     *
     * @param entry a single component, e.g. a name {@link #list} gave
     * @throws IOException as {@link #linkName(Path, String, ScanScope)}
     */
    public String linkName(Path dir, String entry, String name, ScanScope scope) throws IOException {
        if (readsNatively(dir)) {
            FileReader reader = reader(scope);
            try {
                String known = reader.linkName(dir.toString(), entry, name);
                if (known != null) {
                    return known;
                }
            } finally {
                done(scope, reader);
            }
        }
        return linkNameNio(dir.resolve(entry).resolve(name));
    }

    /** The NIO way of {@link #linkName(Path, String, ScanScope)}: the link's whole text, then its last component. */
    private static String linkNameNio(Path link) throws IOException {
        String target = Files.readSymbolicLink(link).toString();
        int from = target.lastIndexOf('/') + 1;
        if (from == target.length()) {
            throw new IOException(name(link) + " link text " + printable(target) + " has no last component");
        }
        return target.substring(from);
    }

    /**
     * The names of the entries of the directory {@code dir} (without {@code .} and {@code ..}), in the order the
     * file system lists them: a bus listing without a {@link Path} per entry where the native reader runs. In a
     * {@link ScanRound}, its thread's listing keeps the directory's descriptor for the reads below it.
     *
     * @throws java.nio.file.NoSuchFileException when the directory is missing
     * @throws java.nio.file.NotDirectoryException when it is not a directory
     * @throws IOException when it cannot be listed
     */
    public List<String> list(Path dir, ScanScope scope) throws IOException {
        if (readsNatively(dir)) {
            FileReader reader = reader(scope);
            try {
                List<String> names = reader.list(dir.toString(), null);
                if (names != null) {
                    return names;
                }
            } finally {
                done(scope, reader);
            }
        }
        return listNio(dir);
    }

    /**
     * {@link #list(Path, ScanScope)} of {@code dir.resolve(name)}, without making that {@link Path} where the native
     * reader runs (a function's {@code vfio-dev}).
     *
     * @param name a relative path without {@code .} or {@code ..}, e.g. {@code vfio-dev}
     * @throws IOException as {@link #list(Path, ScanScope)}
     */
    public List<String> list(Path dir, String name, ScanScope scope) throws IOException {
        if (readsNatively(dir)) {
            FileReader reader = reader(scope);
            try {
                List<String> names = reader.list(dir.toString(), name);
                if (names != null) {
                    return names;
                }
            } finally {
                done(scope, reader);
            }
        }
        return listNio(dir.resolve(name));
    }

    /** The NIO way of {@link #list(Path, ScanScope)}, which the native reader falls back to. */
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
     * {@link Files#isDirectory Files.isDirectory(path)}: true when {@code path} is a directory, links followed;
     * false when it is anything else, missing, or cannot be asked. One {@code fstatat(2)} where the native reader runs,
     * without the attribute objects NIO makes.
     */
    public boolean isDirectory(Path path, ScanScope scope) {
        int type = type(path, null, true, scope);
        return type >= 0 ? type == FileReader.DIRECTORY : Files.isDirectory(path);
    }

    /**
     * {@link #isDirectory(Path, ScanScope)} of {@code dir.resolve(name)}, links followed (a {@code driver} link that
     * leads to a directory is one), without making that {@link Path} where the native reader runs.
     *
     * @param name a relative path without {@code .} or {@code ..}, e.g. {@code driver}
     */
    public boolean isDirectory(Path dir, String name, ScanScope scope) {
        int type = type(dir, name, true, scope);
        return type >= 0 ? type == FileReader.DIRECTORY : Files.isDirectory(dir.resolve(name));
    }

    /**
     * {@link Files#exists Files.exists(dir.resolve(name), options)}: true when there is such a file; with
     * {@link LinkOption#NOFOLLOW_LINKS} a link counts itself (a dangling one exists), otherwise links are followed.
     * False when it is missing or cannot be asked. One {@code fstatat(2)} where the native reader runs (with
     * {@code AT_SYMLINK_NOFOLLOW} for {@code NOFOLLOW_LINKS}, as {@code lstat}).
     *
     * @param name a relative path without {@code .} or {@code ..}, e.g. {@code sriov_totalvfs}
     */
    public boolean exists(Path dir, String name, ScanScope scope, LinkOption... options) {
        boolean follow = true;
        for (LinkOption option : options) {
            follow &= option != LinkOption.NOFOLLOW_LINKS;
        }
        int type = type(dir, name, follow, scope);
        return type >= 0 ? type != FileReader.MISSING : Files.exists(dir.resolve(name), options);
    }

    /** The native reader's type bits of {@code dir} or {@code dir/name}; -1 when NIO must answer. */
    private int type(Path dir, String name, boolean follow, ScanScope scope) {
        if (!readsNatively(dir)) {
            return -1;
        }
        FileReader reader = reader(scope);
        try {
            return reader.type(dir.toString(), name, follow);
        } finally {
            done(scope, reader);
        }
    }

    /** Reads {@code file}, or when it is null {@code dir.resolve(name)}, made only where a Path is needed. */
    private String read(Path file, Path dir, String name, ScanScope scope, boolean strip) throws IOException {
        if (readsNatively(file != null ? file : dir)) {
            FileReader reader = reader(scope);
            try {
                String text = file != null ? reader.read(file.toString(), null, strip)
                        : reader.read(dir.toString(), name, strip);
                if (text != null) {
                    return text;
                }
            } catch (FileReader.NotRegular e) {
                throw new NotRegularFileException(e.file(), e.kind());
            } finally {
                done(scope, reader);
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
    private String readAll(InputStream in, byte[] buffer, boolean strip) throws IOException {
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
                return texts.decode(bytes, length, strip);
            }
            length += n;
        }
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
                return "HostFiles.ReadBuffer";
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
     * A link's text for a message: quoted when it is printable ASCII, else only its length (outside text with control
     * characters never goes into a message unescaped; the escaping helper of core is above this module).
     */
    private static String printable(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c >= 0x7f) {
                return "(" + text.length() + " characters, not plain ASCII)";
            }
        }
        return "\"" + text + "\"";
    }
}
