package dev.vgpu.hostfiles.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The reader of the default file system that {@link NativeReaderProvider} makes on Java 22 and later: the system
 * calls {@code openat}, {@code fstat}, {@code newfstatat}, {@code read}, {@code close}, {@code readlinkat} and
 * {@code getdents64}, made through the C library's {@code syscall(2)} with {@code java.lang.foreign} (one downcall
 * handle for all of them, and its errno-capturing twin: {@link Syscalls}), into native buffers that this reader
 * reuses, so that a read
 * makes no {@code File}, stream, file descriptor object or cleaner registration, and a link or a listing makes no
 * {@code Path}. Only in the Java 22 classes of the multi-release jar.
 *
 * <p>An attribute is opened with {@code O_NONBLOCK} (a FIFO opens at once instead of waiting for a writer) and
 * {@code O_NOCTTY}, then {@code fstat} on the open descriptor says what it is: anything but a regular file is
 * closed unread and refused. So there is no window between a type check and the open, which the NIO way has.
 *
 * <p>When to stop reading: the NIO way reads until {@code read(2)} returns 0; this one stops as soon as the size
 * {@code fstat} reported says the content is complete, which saves that last call on nearly every attribute:
 * <ul>
 * <li>{@code st_size > 0} and at least {@code st_size} bytes read: an ordinary file, read to the size it had when it
 *     was opened (the request asks for more than that, so a file that grew meanwhile is read as far as it had grown
 *     by then, as a reader racing a writer sees it either way); a short read of such a file goes on reading.</li>
 * <li>{@code st_size} is the page size, {@code st_blocks} is 0, the <em>first</em> read returned fewer bytes than
 *     a page and they end with a newline: a sysfs (kernfs) text attribute, which reports a page as its size and has
 *     no blocks. The kernel makes such an attribute whole into one page at the first read and hands it out whole to
 *     a read that asks for at least a page (this one asks for 64 KiB + 1), so a short first read is the end. A
 *     binary attribute usually reports its real size (PCI {@code config}), which the first rule ends; one that
 *     reports exactly a page and whose driver answers a first read short would be cut only if those bytes happened
 *     to end with a newline, which is why the newline is asked for (the scan reads no binary attribute). A regular
 *     file of one page that is all hole (no blocks) returns the whole page, never fewer bytes.</li>
 * <li>{@code st_size} 0 (procfs, cgroupfs, debugfs report no size): read until {@code read(2)} returns 0.</li>
 * </ul>
 * What the rule trusts is a file system that reports a page-sized, blockless file yet ends a first read early
 * without being at its end; a network or FUSE file system could, sysfs does not (docs/BUILD.md, "The native
 * reader's reads").
 *
 * <p>Errors are the NIO way's: {@code ENOENT} a {@link NoSuchFileException}, {@code EACCES} an
 * {@link AccessDeniedException}, {@code ELOOP} the {@link FileSystemException} NIO makes of it, a link that is not
 * one a {@link NotLinkException}, a listing of a file a {@link NotDirectoryException}, a file over
 * {@value FileReader#MAX_BYTES} bytes the same {@link IOException}. Any other error, and any path or name that is
 * not plain ASCII (NIO encodes those with the platform's file-name encoding), answers null: the caller asks NIO,
 * which gives its exact answer.
 *
 * <p>Which calls capture {@code errno}: a handle made with {@code captureCallState} costs a memory segment object per
 * call under C1 (the daemon's manifest, no escape analysis), so every call is first made through a handle that
 * captures nothing, and only a call that failed is made again through a capturing one to learn why. That second call
 * is a new call: for {@code read} on sysfs the kernel runs the attribute's show function again, so a failing
 * attribute costs its driver two calls, and the second outcome, error or success, is the answer (a transient failure
 * the second call no longer meets is read as a success, which the NIO way, reading once more on the caller's next
 * scan, would give a scan later). {@code openat} and {@code readlink} fail often and the same way on every scan (a
 * missing optional attribute, an unbound function's absent {@code driver} link), so each reader remembers the
 * paths, by a 64-bit hash of their text, whose last open or link read failed, and calls the capturing handle at once
 * for those: a rescan of an unchanged host makes no second calls. A hash that two paths share only picks the
 * handle, never the answer. {@code fstat} and {@code fstatat} never need the reason: a failure there is answered
 * without it.
 *
 * <p>Threads: the method handles are immutable and shared by every reader of one provider. A reader is one
 * {@link Scratch} (native buffers, a byte array, the paths that failed, the directories a round keeps), used by one
 * thread at a time: its owner, {@code HostFiles}, lends it to one call or to one scan round's thread (no call of this
 * class calls back into it). Its native memory is freed by the garbage collector with the reader; its kept
 * descriptors are closed when its round ends ({@link #round(boolean)}).
 */
final class NativeReader implements FileReader {

    private static final int AT_FDCWD = Syscalls.AT_FDCWD;
    private static final int O_RDONLY = Syscalls.O_RDONLY;
    private static final int O_NOCTTY = 0400;
    private static final int O_NONBLOCK = 04000;
    private static final int O_CLOEXEC = Syscalls.O_CLOEXEC;
    /** The same value on x86_64 and aarch64. */
    private static final int O_PATH = 010000000;
    /** Directories whose listing descriptor a reader keeps during a round (docs/BUILD.md, "Kept directories"). */
    private static final int KEPT = 4;

    private static final int ENOENT = 2;
    private static final int EINTR = 4;
    private static final int EACCES = 13;
    private static final int ENOTDIR = 20;
    private static final int EINVAL = 22;
    private static final int ELOOP = 40;

    /** Offsets of {@code st_size} and {@code st_blocks} in {@code struct stat}: the same on x86_64 and aarch64. */
    private static final long SIZE_OFFSET = 48;
    private static final long BLOCKS_OFFSET = 64;

    private static final int S_IFMT = 0170000;
    private static final int S_IFREG = 0100000;
    private static final int AT_SYMLINK_NOFOLLOW = 0x100;

    /**
     * Pointer arguments are passed as their addresses in a {@code long} (the same register on LP64 Linux): a
     * {@code MemorySegment} argument, and a slice at an offset, would be an object per call under C1, which the
     * daemon's manifest runs (no escape analysis).
     */
    private static final ValueLayout POINTER = ValueLayout.JAVA_LONG;

    /** Including the terminating NUL, as the kernel's {@code PATH_MAX}. */
    private static final int PATH_BYTES = 4096;
    private static final int STAT_BYTES = 256;
    private static final int DIRENT_BYTES = 32 * 1024;
    /** A sysfs attribute is at most a page; one more byte tells a full page from a longer file. */
    private static final int TEXT_BYTES = 4096 + 1;
    /**
     * Slots of a reader's set of paths whose last {@code openat} or {@code readlink} failed; the set starts afresh when
     * it is half full, so a host with more failing paths than that only pays the second calls again.
     */
    private static final int FAILED_SLOTS = 4096;

    private final MethodHandle sys;
    private final MethodHandle sysErrno;
    private final Syscalls.Numbers nr;
    private final VarHandle errno;
    private final long stateBytes;
    private final int directoryFlag;
    private final long modeOffset;
    private final long pageSize;
    private final KnownTexts texts;
    /** The working state; this reader's alone. */
    private final Scratch scratch;

    NativeReader(Syscalls calls, KnownTexts texts) {
        this.sys = calls.sys;
        this.sysErrno = calls.sysErrno;
        this.nr = calls.nr;
        this.errno = calls.errno;
        this.stateBytes = calls.stateBytes;
        this.directoryFlag = calls.directoryFlag;
        this.modeOffset = calls.modeOffset;
        this.pageSize = calls.pageSize;
        this.texts = texts;
        this.scratch = new Scratch();
    }

    @Override
    public void round(boolean running) {
        scratch.keeping = running;
        if (!running) {
            scratch.release();
        }
    }

    /** Native buffers and what the reader remembers: used by one call at a time. */
    private final class Scratch {
        final MemorySegment path;
        final MemorySegment data;
        final MemorySegment stat;
        final MemorySegment state;
        final MemorySegment dirents;
        final long pathAddress;
        final long dataAddress;
        final long statAddress;
        final long direntsAddress;
        final byte[] text = new byte[TEXT_BYTES];
        /** The hash of the path {@link #encode} last wrote, never 0 (0 marks a free slot of {@link #failed}). */
        long pathHash;
        /** Hashes of the paths whose last openat or readlink failed (open addressing); made at the first failure. */
        long[] failed;
        int failedCount;
        /**
         * Where the call for the path {@link #encode} wrote goes: {@code AT_FDCWD} and the whole path, or a kept
         * directory's descriptor and the part of the path below it.
         */
        int atFd = AT_FDCWD;
        long atAddress;
        /** Whether a scan round holds this reader ({@link #round}); descriptors are kept only while one does. */
        boolean keeping;
        /** Directories listed in this thread's scan, and their open descriptors (-1: free slot). */
        final String[] keptDirs = new String[KEPT];
        final int[] keptFds = {-1, -1, -1, -1};
        /** The slot the next kept directory takes (round robin: a scan lists two or three). */
        int keptNext;
        /** The device directory kept ({@link #openDevice}) and its descriptor (-1: none). */
        String deviceDir;
        int deviceFd = -1;
        /** The last directory that could not be opened as one. */
        String deviceRefused;
        /** Changes whenever the kept directories do, so that a cached {@link #dirAtFd} is worked out again. */
        int keptVersion;
        /** The directory whose text and '/' the path starts with ({@link #putDir}); null: none known. */
        String dirText;
        int dirEnd;
        long dirHash;
        int dirVersion = -1;
        int dirAtFd;
        long dirAtOffset;
        /** The names of the listing under way, kept for the next one: a listing then allocates its answer only. */
        String[] listed = new String[64];

        Scratch() {
            Arena arena = Arena.ofAuto();
            path = arena.allocate(PATH_BYTES);
            data = arena.allocate(MAX_BYTES + 1L);
            stat = arena.allocate(STAT_BYTES, 8);
            state = arena.allocate(stateBytes, 8);
            dirents = arena.allocate(DIRENT_BYTES, 8);
            pathAddress = path.address();
            dataAddress = data.address();
            statAddress = stat.address();
            direntsAddress = dirents.address();
        }

        int errno() {
            return (int) errno.get(state, 0L);
        }

        /**
         * Writes {@code dir/name} (or {@code dir}) NUL-terminated into {@link #path}; false when it is not plain ASCII
         * without NUL, too long, or empty, which the NIO way handles.
         */
        boolean encode(String dir, String name) {
            if (name == null) {
                dirText = null; // the NUL after dir overwrites the '/' a cached directory's text ends with
                pathHash = 1;
                int at = put(dir, 0);
                atFd = AT_FDCWD;
                atAddress = pathAddress;
                return at > 0 && end(at);
            }
            int at = putDir(dir);
            if (at < 0) {
                return false;
            }
            at = put(name, at);
            return at >= 0 && end(at);
        }

        /** {@link #encode(String, String)} of {@code dir/entry/name}, without joining them first. */
        boolean encode(String dir, String entry, String name) {
            int at = putDir(dir);
            if (at < 0) {
                return false;
            }
            at = put(entry, at);
            if (at <= 0 || at + 1 >= PATH_BYTES) {
                return false;
            }
            at = put(name, put('/', at));
            return at >= 0 && end(at);
        }

        /**
         * Writes {@code dir} and a {@code /} (unless it ends with one) at the start of the path, and points the call
         * at a kept directory where {@code dir} lies below one ({@link #under}); the position after them, or -1 when
         * the text does not fit or is not plain ASCII. The same directory {@code String} as the last call's (a
         * device's attributes are read one after the other, the bus's links all through one text) is already
         * there: its hash and where the call goes are taken from the last time, not worked out again.
         */
        private int putDir(String dir) {
            boolean again = dir == dirText;
            if (!again) {
                dirText = null;
                pathHash = 1;
                int at = put(dir, 0);
                if (at <= 0) {
                    return -1;
                }
                if (dir.charAt(dir.length() - 1) != '/') {
                    at = put('/', at);
                }
                dirText = dir;
                dirEnd = at;
                dirHash = pathHash;
                dirVersion = -1;
            } else {
                pathHash = dirHash;
            }
            if (dirVersion != keptVersion) {
                under(dir);
                dirAtFd = atFd;
                dirAtOffset = atAddress - pathAddress;
                dirVersion = keptVersion;
            } else {
                atFd = dirAtFd;
                atAddress = pathAddress + dirAtOffset;
            }
            if (again && keeping && dir != deviceDir && dir != deviceRefused
                    && atAddress != pathAddress + dirEnd && dir.charAt(dir.length() - 1) != '/') {
                openDevice(dir);
            }
            return dirEnd;
        }

        /**
         * The second call in a row below the same directory (a device's attributes are read one after the other):
         * opens it ({@code O_PATH}, itself relative to a kept directory where it lies below one) and keeps it as the
         * thread's one device directory until the next one or the scan's end, so the calls that follow walk only
         * their own name. A directory that cannot be opened is left to whole paths, which then give their own
         * answers; it is not tried again while it is the last one asked.
         */
        private void openDevice(String dir) {
            // the path holds dir and '/' up to dirEnd: end it there for the open, then put the '/' back
            path.set(ValueLayout.JAVA_BYTE, dirEnd - 1, (byte) 0);
            int fd;
            try {
                fd = (int) (long) sys.invokeExact(nr.openat(), (long) atFd, atAddress,
                        (long) (O_PATH | directoryFlag | O_CLOEXEC), 0L);
            } catch (Throwable e) {
                fd = -1;
            } finally {
                path.set(ValueLayout.JAVA_BYTE, dirEnd - 1, (byte) '/');
            }
            if (fd < 0) {
                deviceRefused = dir;
                return;
            }
            if (deviceFd >= 0) {
                closeQuietly(deviceFd);
            }
            deviceDir = dir;
            deviceFd = fd;
            keptVersion++;
            atFd = fd;
            atAddress = pathAddress + dirEnd;
            dirAtFd = atFd;
            dirAtOffset = dirEnd;
            dirVersion = keptVersion;
        }

        /**
         * Points the call at a kept directory when the path lies below one: {@code dir} is the device directory
         * kept, a listed directory, or starts with one and a {@code /} (a name follows it in the path). Otherwise the
         * whole path, from the working directory's point of view ({@code AT_FDCWD}; paths here are absolute).
         */
        private void under(String dir) {
            atFd = AT_FDCWD;
            atAddress = pathAddress;
            if (!keeping) {
                return;
            }
            if (dir == deviceDir) {
                atFd = deviceFd;
                atAddress = pathAddress + dirEnd;
                return;
            }
            for (int i = 0; i < KEPT; i++) {
                String kept = keptDirs[i];
                if (kept == null) {
                    continue;
                }
                int length = kept.length();
                if (dir == kept || (dir.startsWith(kept) && (dir.length() == length || dir.charAt(length) == '/'))) {
                    // the encoded path holds dir, then '/' (unless dir ends with one), so the part below starts after
                    // the kept directory's text and the '/' that follows it there
                    atFd = keptFds[i];
                    atAddress = pathAddress + (kept.charAt(length - 1) == '/' ? length : length + 1);
                    return;
                }
            }
        }

        /** Keeps {@code fd}, the open descriptor of the directory {@code dir} just listed, until the scan ends. */
        void keep(String dir, int fd) {
            keptVersion++;
            for (int i = 0; i < KEPT; i++) {
                if (dir.equals(keptDirs[i])) {
                    closeQuietly(keptFds[i]); // listed again: the newer descriptor replaces it
                    keptFds[i] = fd;
                    return;
                }
            }
            int slot = keptNext;
            keptNext = (slot + 1) % KEPT;
            if (keptFds[slot] >= 0) {
                closeQuietly(keptFds[slot]);
            }
            keptDirs[slot] = dir;
            keptFds[slot] = fd;
        }

        /** Closes every kept descriptor. */
        void release() {
            keptVersion++;
            if (deviceFd >= 0) {
                closeQuietly(deviceFd);
            }
            deviceFd = -1;
            deviceDir = null;
            deviceRefused = null;
            for (int i = 0; i < KEPT; i++) {
                if (keptFds[i] >= 0) {
                    closeQuietly(keptFds[i]);
                }
                keptFds[i] = -1;
                keptDirs[i] = null;
            }
            keptNext = 0;
        }

        /** Puts the ASCII text at {@code at}; the position after it, or -1 when it does not fit or is not ASCII. */
        private int put(String text, int at) {
            int length = text.length();
            if (at + length >= PATH_BYTES) {
                return -1;
            }
            long hash = pathHash;
            for (int i = 0; i < length; i++) {
                char c = text.charAt(i);
                if (c == 0 || c >= 0x80) {
                    return -1;
                }
                path.set(ValueLayout.JAVA_BYTE, at + i, (byte) c);
                hash = 31 * hash + c;
            }
            pathHash = hash;
            return at + length;
        }

        private int put(char c, int at) {
            path.set(ValueLayout.JAVA_BYTE, at, (byte) c);
            pathHash = 31 * pathHash + c;
            return at + 1;
        }

        private boolean end(int at) {
            if (at >= PATH_BYTES) {
                return false;
            }
            path.set(ValueLayout.JAVA_BYTE, at, (byte) 0);
            long hash = pathHash * 0x9E3779B97F4A7C15L;
            hash ^= hash >>> 29;
            pathHash = hash == 0 ? 1 : hash;
            return true;
        }

        /** Whether the last openat or readlink of the path {@link #encode} wrote failed. */
        boolean failedBefore() {
            if (failed == null) {
                return false;
            }
            for (int slot = (int) pathHash & (FAILED_SLOTS - 1); ; slot = (slot + 1) & (FAILED_SLOTS - 1)) {
                long known = failed[slot];
                if (known == pathHash) {
                    return true;
                }
                if (known == 0) {
                    return false; // the set is never full (below), so every probe ends
                }
            }
        }

        /** Remembers that the call on the path {@link #encode} wrote failed. */
        void failedNow() {
            if (failed == null) {
                failed = new long[FAILED_SLOTS];
            } else if (failedCount >= FAILED_SLOTS / 2) {
                Arrays.fill(failed, 0L);
                failedCount = 0;
            }
            int slot = (int) pathHash & (FAILED_SLOTS - 1);
            while (failed[slot] != 0) {
                if (failed[slot] == pathHash) {
                    return;
                }
                slot = (slot + 1) & (FAILED_SLOTS - 1);
            }
            failed[slot] = pathHash;
            failedCount++;
        }
    }

    /**
     * The text of the regular file {@code dir/name} (or {@code dir} itself when {@code name} is null), as
     * {@code HostFiles.read} answers it; null when the NIO way must answer.
     */
    @Override
    public String read(String dir, String name, boolean strip) throws IOException {
        Scratch s = scratch;
        if (!s.encode(dir, name)) {
            return null;
        }
        int fd = openat(s, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
            int error = s.errno();
            throwIfKnown(error, dir, null, name);
            return null;
        }
        int length = 0;
        try {
            if (fstat(fd, s) != 0) {
                return null;
            }
            int type = s.stat.get(ValueLayout.JAVA_INT, modeOffset) & S_IFMT;
            if (type != S_IFREG) {
                throw new NotRegular(joined(dir, name), kind(type));
            }
            long size = s.stat.get(ValueLayout.JAVA_LONG, SIZE_OFFSET);
            boolean kernfsText = size == pageSize && s.stat.get(ValueLayout.JAVA_LONG, BLOCKS_OFFSET) == 0;
            while (true) {
                long n = read(fd, s, length);
                if (n == 0) {
                    break;
                }
                if (n < 0) {
                    int error = s.errno();
                    if (error == EINTR) {
                        continue;
                    }
                    throw new IOException(last(dir, name) + " cannot be read: " + words(error));
                }
                boolean first = length == 0;
                length += (int) n;
                if (length > MAX_BYTES) {
                    throw new IOException(last(dir, name) + " is larger than " + MAX_BYTES + " bytes");
                }
                if ((size > 0 && length >= size)
                        || (kernfsText && first && n < pageSize && s.data.get(ValueLayout.JAVA_BYTE, n - 1) == '\n')) {
                    break; // complete by the size fstat reported (class comment): no read that returns 0
                }
            }
        } finally {
            closeQuietly(fd);
        }
        byte[] bytes = length <= s.text.length ? s.text : new byte[length];
        MemorySegment.copy(s.data, ValueLayout.JAVA_BYTE, 0, bytes, 0, length);
        return texts.decode(bytes, length, strip);
    }

    /**
     * The last component of the text of the link {@code dir/entry/name} ({@code dir/name} without an entry), written
     * into the path segment part by part: a bus entry's {@code driver} read without the {@code entry/driver} text a
     * join would make for every function; a short name is the string the reader's {@link KnownTexts} keep for it.
     * Null when the NIO way must answer.
     */
    @Override
    public String linkName(String dir, String entry, String name) throws IOException {
        Scratch s = scratch;
        if (entry == null ? !s.encode(dir, name) : !s.encode(dir, entry, name)) {
            return null;
        }
        return linkName(s, dir, entry, name);
    }

    /**
     * Reads the link whose path {@code s.path} holds, {@code dir/entry/name} ({@code dir/name} when {@code entry} is
     * null); the two are joined as text only for a failure's message.
     */
    private String linkName(Scratch s, String dir, String entry, String name) throws IOException {
        long n;
        try {
            if (s.failedBefore()) {
                n = (long) sysErrno.invokeExact(s.state, nr.readlinkat(), (long) s.atFd, s.atAddress,
                        s.direntsAddress, (long) PATH_BYTES);
            } else {
                n = (long) sys.invokeExact(nr.readlinkat(), (long) s.atFd, s.atAddress, s.direntsAddress,
                        (long) PATH_BYTES);
                if (n < 0) {
                    // again, to learn why (class comment)
                    n = (long) sysErrno.invokeExact(s.state, nr.readlinkat(), (long) s.atFd, s.atAddress,
                            s.direntsAddress, (long) PATH_BYTES);
                    if (n < 0) {
                        s.failedNow();
                    }
                }
            }
        } catch (Throwable e) {
            throw failed(e);
        }
        if (n < 0) {
            int error = s.errno();
            if (error == EINVAL) {
                throw new NotLinkException(joined(dir, child(entry, name)));
            }
            throwIfKnown(error, dir, entry, name);
            return null;
        }
        if (n >= PATH_BYTES) {
            return null;
        }
        int end = (int) n;
        int from = end;
        while (from > 0 && s.dirents.get(ValueLayout.JAVA_BYTE, from - 1) != '/') {
            from--;
        }
        for (int i = from; i < end; i++) {
            byte b = s.dirents.get(ValueLayout.JAVA_BYTE, i);
            if (b < 0x20 || b == 0x7f) {
                return null; // not plain printable ASCII: NIO decodes it and the caller's message escapes it
            }
        }
        if (from == end) {
            return null; // no last component: NIO reads the text again for the message
        }
        return known(s, s.dirents, from, end);
    }

    /** The name at {@code segment[from, end)}, as the reader's {@link KnownTexts} keep it. */
    private String known(Scratch s, MemorySegment segment, int from, int end) {
        int length = end - from;
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, from, s.text, 0, length);
        String known = texts.of(s.text, 0, length);
        return known != null ? known : new String(s.text, 0, length, StandardCharsets.US_ASCII);
    }

    /**
     * The entry names of the directory {@code dir} (or {@code dir/name}), in directory order, as
     * {@code HostFiles.list} gives them.
     */
    @Override
    public List<String> list(String dir, String name) throws IOException {
        Scratch s = scratch;
        if (!s.encode(dir, name)) {
            return null;
        }
        int fd = openat(s, O_RDONLY | directoryFlag | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
            int error = s.errno();
            if (error == ENOTDIR) {
                throw new NotDirectoryException(joined(dir, name));
            }
            throwIfKnown(error, dir, null, name);
            return null;
        }
        int count = 0;
        try {
            while (true) {
                long n;
                try {
                    n = (long) sys.invokeExact(nr.getdents64(), (long) fd, s.direntsAddress, (long) DIRENT_BYTES,
                            0L);
                    if (n < 0) {
                        // again, to learn why (what fails has read nothing, so the second call is the same call)
                        n = (long) sysErrno.invokeExact(s.state, nr.getdents64(), (long) fd, s.direntsAddress,
                                (long) DIRENT_BYTES, 0L);
                    }
                } catch (Throwable e) {
                    throw failed(e);
                }
                if (n == 0) {
                    break;
                }
                if (n < 0) {
                    if (s.errno() == EINTR) {
                        continue;
                    }
                    return null;
                }
                // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name (NUL-terminated)
                for (long at = 0; at < n; ) {
                    int recordLength = Short.toUnsignedInt(s.dirents.get(ValueLayout.JAVA_SHORT_UNALIGNED, at + 16));
                    long nameAt = at + 19;
                    int length = 0;
                    while (s.dirents.get(ValueLayout.JAVA_BYTE, nameAt + length) != 0) {
                        byte b = s.dirents.get(ValueLayout.JAVA_BYTE, nameAt + length);
                        if (b < 0 || length == s.text.length) {
                            return null; // not ASCII: NIO decodes it with the file-name encoding
                        }
                        s.text[length++] = b;
                    }
                    if (!(length == 1 && s.text[0] == '.') && !(length == 2 && s.text[0] == '.' && s.text[1] == '.')) {
                        String known = texts.of(s.text, 0, length);
                        if (count == s.listed.length) {
                            s.listed = Arrays.copyOf(s.listed, count * 2);
                        }
                        s.listed[count++] = known != null ? known
                                : new String(s.text, 0, length, StandardCharsets.US_ASCII);
                    }
                    at += recordLength;
                }
            }
            List<String> names = Collections.unmodifiableList(Arrays.asList(Arrays.copyOf(s.listed, count)));
            if (s.keeping && name == null) {
                s.keep(dir, fd); // the scan's next calls below this directory go relative to it
                fd = -1;
            }
            return names;
        } finally {
            if (fd >= 0) {
                closeQuietly(fd);
            }
            Arrays.fill(s.listed, 0, count, null); // the scratch holds no names between listings
        }
    }

    /**
     * The file type bits ({@code S_IFMT}) of {@code dir/name} (or {@code dir}), links followed or not, from one
     * {@code fstatat}; {@link #MISSING} when that fails (missing, denied, a loop: NIO's {@code isDirectory} and
     * {@code exists} answer false for every failure, so no errno is needed); -1 when the NIO way must answer (a
     * path that is not plain ASCII).
     */
    @Override
    public int type(String dir, String name, boolean follow) {
        Scratch s = scratch;
        if (!s.encode(dir, name)) {
            return -1;
        }
        int result;
        try {
            result = (int) (long) sys.invokeExact(nr.fstatat(), (long) s.atFd, s.atAddress, s.statAddress,
                    follow ? 0L : (long) AT_SYMLINK_NOFOLLOW);
        } catch (Throwable e) {
            if (e instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException("fstatat(2) could not be called", e);
        }
        return result != 0 ? MISSING : s.stat.get(ValueLayout.JAVA_INT, modeOffset) & S_IFMT;
    }

    /**
     * {@code openat(2)} of the path in {@code s.path}; after a failure {@link Scratch#errno()} says why. A path whose
     * last open failed is opened through the capturing handle at once; any other through the one that captures
     * nothing, and only when that fails, again through the capturing one (class comment).
     */
    private int openat(Scratch s, int flags) throws IOException {
        try {
            if (s.failedBefore()) {
                return (int) (long) sysErrno.invokeExact(s.state, nr.openat(), (long) s.atFd, s.atAddress,
                        (long) flags, 0L);
            }
            int fd = (int) (long) sys.invokeExact(nr.openat(), (long) s.atFd, s.atAddress, (long) flags, 0L);
            if (fd >= 0) {
                return fd;
            }
            fd = (int) (long) sysErrno.invokeExact(s.state, nr.openat(), (long) s.atFd, s.atAddress, (long) flags,
                    0L);
            if (fd < 0) {
                s.failedNow();
            }
            return fd;
        } catch (Throwable e) {
            throw failed(e);
        }
    }

    private int fstat(int fd, Scratch s) throws IOException {
        try {
            return (int) (long) sys.invokeExact(nr.fstat(), (long) fd, s.statAddress, 0L, 0L);
        } catch (Throwable e) {
            throw failed(e);
        }
    }

    /** One {@code read(2)}; after a failure {@link Scratch#errno()} says why. */
    private long read(int fd, Scratch s, int length) throws IOException {
        long address = s.dataAddress + length;
        long count = MAX_BYTES + 1 - length;
        try {
            long n = (long) sys.invokeExact(nr.read(), (long) fd, address, count, 0L);
            // again, to learn why: a new read (class comment), whose outcome is the answer
            return n >= 0 ? n : (long) sysErrno.invokeExact(s.state, nr.read(), (long) fd, address, count, 0L);
        } catch (Throwable e) {
            throw failed(e);
        }
    }

    private void closeQuietly(int fd) {
        try {
            long ignored = (long) sys.invokeExact(nr.close(), (long) fd, 0L, 0L, 0L);
        } catch (Throwable e) {
            throw new IllegalStateException("close(2) could not be called", e);
        }
    }

    /** A downcall that could not be made at all (it never fails on a loaded handle): an error of this class. */
    private static IOException failed(Throwable e) {
        if (e instanceof Error error) {
            throw error;
        }
        return new IOException("native call failed: " + e, e);
    }

    /** Throws what NIO throws for the errors it names by type; returns for any other error. */
    private static void throwIfKnown(int error, String dir, String entry, String name) throws IOException {
        switch (error) {
            case ENOENT -> throw new Missing(dir, entry, name);
            case EACCES -> throw new AccessDeniedException(joined(dir, child(entry, name)));
            case ELOOP -> throw new FileSystemException(joined(dir, child(entry, name)), null,
                    "Too many levels of symbolic links or unable to access attributes of symbolic link");
            default -> {
                // the NIO way answers with its own words
            }
        }
    }

    /**
     * A missing file, without a stack trace: optional attributes are missing on most functions, and filling in a
     * stack for each was a tenth of a scan's allocation. It names the host's file, not a fault of the code.
     */
    private static final class Missing extends NoSuchFileException {
        private static final long serialVersionUID = 1L;

        private final String dir;
        private final String entry;
        private final String name;

        /**
         * The file is {@code dir/entry/name} ({@code dir/name} without an entry), joined only when asked for: most
         * callers take a missing optional attribute as its absence and never look.
         */
        Missing(String dir, String entry, String name) {
            super(null);
            this.dir = dir;
            this.entry = entry;
            this.name = name;
        }

        @Override
        public String getFile() {
            return joined(dir, child(entry, name));
        }

        @Override
        public String getMessage() {
            return getFile(); // what NoSuchFileException(file) says: the file, without a reason
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }

    private static String words(int error) {
        return switch (error) {
            case 5 -> "Input/output error";
            case 12 -> "Cannot allocate memory";
            case 21 -> "Is a directory";
            case EINVAL -> "Invalid argument";
            default -> "error " + error;
        };
    }

    private static String kind(int type) {
        return switch (type) {
            case 0040000 -> "a directory";
            case 0010000 -> "a FIFO";
            case 0140000 -> "a socket";
            case 0020000 -> "a character device";
            case 0060000 -> "a block device";
            default -> "a FIFO, socket or device node";
        };
    }

    /** {@code entry/name}, or {@code name} when there is no entry. */
    private static String child(String entry, String name) {
        return entry == null ? name : entry + '/' + name;
    }

    /** The path text NIO's exceptions carry: {@code dir.resolve(name).toString()}. */
    private static String joined(String dir, String name) {
        return name == null ? dir : dir.endsWith("/") ? dir + name : dir + '/' + name;
    }

    private static String last(String dir, String name) {
        String path = joined(dir, name);
        String last = path.substring(path.lastIndexOf('/') + 1);
        return last.isEmpty() ? path : last;
    }
}
