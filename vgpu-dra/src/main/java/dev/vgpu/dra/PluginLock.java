package dev.vgpu.dra;

import dev.vgpu.core.internal.Printable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * One process serves a driver on a kubelet root: an exclusive lock ({@code flock}) on
 * {@code <kubelet-root>/plugins/<driver>/.vgpu-dra.lock} for the plugin's life, so that a second daemon for the same
 * driver and root (another state directory, a test left running) is refused before it touches a socket, naming the
 * first from what the first wrote into the file. The kernel releases the lock when the process ends.
 *
 * <p>Opened without following a link and read-write (a FIFO never blocks the open), created owner-only, and checked
 * to be a regular file before and after: anything else at the path is an error naming it, and the link's target is
 * never created. What the holder wrote is read back at most {@value #MAX_HOLDER} bytes, escaped.
 */
final class PluginLock implements AutoCloseable {

    private static final int MAX_HOLDER = 512;

    private final FileChannel channel;
    private final FileLock lock;

    private PluginLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Takes the lock at {@code file}, writing {@code holder} into it.
     *
     * @throws IOException when another process (or another plugin of this one) holds it, naming that holder, or when
     *                     the file cannot be made a lock
     */
    static PluginLock acquire(Path file, String holder) throws IOException {
        Object before = regularOrNothing(file);
        FileChannel channel = FileChannel.open(file, Set.of(StandardOpenOption.READ, StandardOpenOption.WRITE,
                StandardOpenOption.CREATE, LinkOption.NOFOLLOW_LINKS),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Object after = regularOrNothing(file);
            if (after == null || (before != null && !before.equals(after))) {
                throw new IOException(file + " was replaced while it was being opened");
            }
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                throw new IOException("the DRA driver's directory " + file.getParent() + " is served already by "
                        + holder(channel) + ", which holds " + file + ": one process serves a driver on a kubelet"
                        + " root; stop that one first");
            }
            channel.truncate(0);
            channel.write(ByteBuffer.wrap((holder + "\n").getBytes(StandardCharsets.UTF_8)), 0);
            return new PluginLock(channel, lock);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** What the holder wrote, escaped; "another process" when it wrote nothing readable. */
    private static String holder(FileChannel channel) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(MAX_HOLDER);
        channel.read(buffer, 0);
        String text = new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8).strip();
        return text.isEmpty() ? "another process" : Printable.of(text, MAX_HOLDER);
    }

    /** The file key of a regular file at {@code file}, null when nothing is there; anything else is an error. */
    private static Object regularOrNothing(Path file) throws IOException {
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
        if (!attributes.isRegularFile()) {
            throw new IOException(file + " is " + (attributes.isSymbolicLink() ? "a symbolic link"
                    : attributes.isDirectory() ? "a directory" : "a FIFO, socket or device node")
                    + ", not a regular file: remove it (the plugin makes its lock file itself)");
        }
        return attributes.fileKey() != null ? attributes.fileKey() : file;
    }

    /** Releases the lock; the file stays. Idempotent. */
    @Override
    public void close() {
        try {
            if (lock.isValid()) {
                lock.release();
            }
            channel.close();
        } catch (IOException e) {
            // Closing the channel releases the lock.
        }
    }
}
