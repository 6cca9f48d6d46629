package dev.vgpu.daemon;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * One daemon per device-plugin directory: an exclusive lock ({@code flock}) on {@code .vgpu-daemon.lock} in that
 * directory, held for the life of the process. Two daemons on one directory would replace each other's sockets
 * (same names); the second one refuses to start instead. The kubelet reads only its own socket and the plugins'
 * sockets there and ignores other files.
 *
 * <p>Residual: a restarting kubelet empties the directory, deleting the lock file while it stays locked; a second
 * daemon started after that would not see the first. The lock is released by the kernel when the process ends,
 * so a crashed daemon never blocks its successor.
 */
final class DirectoryLock implements AutoCloseable {

    /** The lock file's name in the device-plugin directory. */
    static final String FILE = ".vgpu-daemon.lock";

    private final FileChannel channel;
    private final FileLock lock;

    private DirectoryLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Takes the lock of {@code dir}.
     *
     * @return the lock, or empty when another daemon (in this process or another) holds it
     * @throws IOException when the lock file cannot be created or locked for another reason
     */
    static Optional<DirectoryLock> tryAcquire(Path dir) throws IOException {
        FileChannel channel = FileChannel.open(dir.resolve(FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
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
}
