package dev.vgpu.daemon.serve;

import dev.vgpu.daemon.cli.Refusal;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One daemon per node: an exclusive lock ({@code flock}) on {@code .vgpu-daemon.lock}, held for the life of the
 * process. Two daemons would replace each other's sockets (same names); the second one refuses to start instead.
 *
 * <p>Where: in the state directory when one is given ({@code --state-dir}, a hostPath the kubelet never touches),
 * else in the device-plugin directory. A restarting kubelet empties the device-plugin directory, lock file
 * included, while the first daemon still holds its lock on the deleted file, so a second daemon started after such a
 * restart would not see the first one there (docs/RELIABILITY.md, "The kubelet and the sockets"); the state directory
 * has no such gap.
 *
 * <p>How, so that nothing is created outside the directory and nothing can make the start hang
 * (docs/RELIABILITY.md): the path is checked without following links and must be a regular file or nothing; it is
 * opened with {@code O_NOFOLLOW} (a symbolic link there fails instead of creating its target) and read-write (opening
 * a FIFO read-write never blocks, unlike write-only), created owner-only ({@code 0600}, which no umask widens), and
 * checked again after opening: anything else at the path is an error naming it. The kernel releases the lock when the
 * process ends, so a crashed daemon never blocks its successor.
 */
public final class DirectoryLock implements AutoCloseable {

    /** The lock file's name. */
    public static final String FILE = ".vgpu-daemon.lock";

    /** Read-write (a FIFO never blocks the open), create, never through a symbolic link ({@code O_NOFOLLOW}). */
    private static final Set<OpenOption> OPEN = Set.of(StandardOpenOption.READ, StandardOpenOption.WRITE,
            StandardOpenOption.CREATE, LinkOption.NOFOLLOW_LINKS);
    private static final FileAttribute<?> OWNER_ONLY =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

    private final FileChannel channel;
    private final FileLock lock;

    private DirectoryLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Takes the lock in {@code dir}.
     *
     * @return the lock, or empty when another daemon (in this process or another) holds it
     * @throws IOException when the lock file cannot be created, opened or locked, or something other than a regular
     *                     file is at its path (the message names the path and what is there)
     */
    static Optional<DirectoryLock> tryAcquire(Path dir) throws IOException {
        Path file = dir.resolve(FILE);
        Object before = regularFileOrNothing(file);
        FileChannel channel;
        try {
            channel = FileChannel.open(file, OPEN, OWNER_ONLY);
        } catch (FileSystemException e) {
            throw new IOException("cannot open " + file + " (" + what(file) + "): " + reason(e), e);
        }
        try {
            Object after = regularFileOrNothing(file);
            if (after == null || (before != null && !before.equals(after))) {
                throw new IOException(file + " was replaced while it was being opened; is another process playing"
                        + " with it?");
            }
            FileLock lock = channel.tryLock();
            if (lock == null) {
                channel.close();
                return Optional.empty();
            }
            return Optional.of(new DirectoryLock(channel, lock));
        } catch (OverlappingFileLockException e) {
            channel.close();
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /**
     * The file key of the regular file at {@code file}, or null when nothing is there.
     *
     * @throws IOException naming what is there when it is not a regular file
     */
    private static Object regularFileOrNothing(Path file) throws IOException {
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
        if (!attributes.isRegularFile()) {
            throw new IOException(file + " is " + describe(attributes, file) + ", not a regular file: remove it"
                    + " (the daemon creates its lock file itself and never follows a link there)");
        }
        return Objects.requireNonNullElse(attributes.fileKey(), file);
    }

    private static String what(Path file) {
        try {
            BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            return describe(attributes, file);
        } catch (IOException e) {
            return "nothing there";
        }
    }

    private static String describe(BasicFileAttributes attributes, Path file) {
        if (attributes.isSymbolicLink()) {
            String target;
            try {
                target = " to " + Files.readSymbolicLink(file);
            } catch (IOException e) {
                target = "";
            }
            return "a symbolic link" + target;
        }
        if (attributes.isDirectory()) {
            return "a directory";
        }
        if (attributes.isRegularFile()) {
            return "a regular file";
        }
        return "a FIFO, socket or device node";
    }

    private static String reason(FileSystemException e) {
        return e.getReason() != null ? e.getReason() : e.toString();
    }

    /** Releases the lock (the file stays). Idempotent. */
    @Override
    public void close() {
        try {
            if (lock.isValid()) {
                lock.release();
            }
            channel.close();
        } catch (IOException e) {
            // Closing the channel releases the lock; nothing else to do.
        }
    }

    /**
     * One daemon per node; a second one is refused (exit 2) before it touches any socket: "another vgpu daemon
     * {@code what} (it holds the lock); {@code why}: stop the other one first". The lock is in the state directory
     * when there is one (the kubelet never empties it), else in the device-plugin directory.
     */
    static DirectoryLock take(Path dir, String what, String why) {
        try {
            return DirectoryLock.tryAcquire(dir).orElseThrow(() -> new Refusal("another vgpu daemon " + what
                    + " (it holds " + dir.resolve(DirectoryLock.FILE) + "); " + why + ": stop the other one first"));
        } catch (IOException e) {
            throw new Refusal("cannot lock " + dir.resolve(DirectoryLock.FILE) + ": "
                    + e.getMessage());
        }
    }
}
