package dev.vgpu.daemon.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The single-daemon lock (docs/RELIABILITY.md, "The kubelet and the sockets"): never through a link, never a hang on
 * a FIFO, nothing but a regular file, owner-only.
 */
@Tag("reliability")
class DirectoryLockTest {

    @TempDir
    Path dir;

    @Test
    void aSecondLockOnTheSameDirectoryIsRefusedAndTheFirstReleaseFreesIt() throws IOException {
        try (DirectoryLock first = DirectoryLock.tryAcquire(dir).orElseThrow()) {
            assertThat(first).isNotNull();
            assertThat(DirectoryLock.tryAcquire(dir)).isEmpty();
        }
        Optional<DirectoryLock> again = DirectoryLock.tryAcquire(dir);
        assertThat(again).isPresent();
        again.get().close();
    }

    @Test
    void theLockFileIsOwnerOnly() throws IOException {
        try (DirectoryLock lock = DirectoryLock.tryAcquire(dir).orElseThrow()) {
            assertThat(lock).isNotNull();
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(DirectoryLock.FILE))))
                    .isEqualTo("rw-------");
        }
    }

    @Test
    void aDanglingLinkAtTheLockPathIsRefusedAndItsTargetNeverCreated(@TempDir Path elsewhere) throws IOException {
        Path target = elsewhere.resolve("created-by-root");
        Files.createSymbolicLink(dir.resolve(DirectoryLock.FILE), target);

        assertThatThrownBy(() -> DirectoryLock.tryAcquire(dir)).isInstanceOf(IOException.class)
                .hasMessageContaining(dir.resolve(DirectoryLock.FILE).toString()).hasMessageContaining("symbolic link");
        assertThat(Files.exists(target, LinkOption.NOFOLLOW_LINKS)).isFalse();
    }

    @Test
    void aLinkToAnExistingFileIsRefusedToo(@TempDir Path elsewhere) throws IOException {
        Path target = Files.writeString(elsewhere.resolve("passwd"), "root:x:0:0\n");
        Files.createSymbolicLink(dir.resolve(DirectoryLock.FILE), target);

        assertThatThrownBy(() -> DirectoryLock.tryAcquire(dir)).hasMessageContaining("symbolic link");
        assertThat(Files.readString(target)).isEqualTo("root:x:0:0\n");
    }

    @Test
    void aFifoAtTheLockPathIsRefusedWithoutHanging() throws Exception {
        Path fifo = dir.resolve(DirectoryLock.FILE);
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
        assertThat(mkfifo.waitFor()).isZero();

        // The hang guard only: before, the write-only open of a FIFO never returned.
        CompletableFuture<Throwable> attempt = CompletableFuture.supplyAsync(() -> {
            try {
                DirectoryLock.tryAcquire(dir).ifPresent(DirectoryLock::close);
                return null;
            } catch (IOException e) {
                return e;
            }
        });
        assertThat(attempt.get(60, TimeUnit.SECONDS)).isInstanceOf(IOException.class)
                .hasMessageContaining(fifo.toString()).hasMessageContaining("FIFO");
    }

    @Test
    void aDirectoryAtTheLockPathIsRefusedNamingIt() throws IOException {
        Files.createDirectory(dir.resolve(DirectoryLock.FILE));

        assertThatThrownBy(() -> DirectoryLock.tryAcquire(dir)).hasMessageContaining("is a directory");
    }
}
