package dev.vgpu.dra;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Files that readers see whole or not at all: written to a temporary file in the same directory, then renamed over
 * the target, as CDI's own writer does (docs/DRA.md §6). The temporary name ends in {@code .tmp}, which a CDI
 * runtime never loads (it reads {@code *.json} and {@code *.yaml}).
 */
final class AtomicFiles {

    /** Mode of every file written: the runtime and virt-launcher read them, nobody else writes them. */
    static final Set<PosixFilePermission> READABLE = PosixFilePermissions.fromString("rw-r--r--");

    private AtomicFiles() {
    }

    /** Writes {@code content} to {@code target} atomically with mode 0644, creating the parent directories. */
    static void write(Path target, String content) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path temp = Files.createTempFile(dir, "." + target.getFileName(), ".tmp");
        try {
            Files.writeString(temp, content, StandardCharsets.UTF_8);
            if (dir.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                Files.setPosixFilePermissions(temp, READABLE);
            }
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    /** Deletes a file, or a directory with everything in it; nothing there is fine. Links are not followed. */
    static void delete(Path path) throws IOException {
        if (Files.isDirectory(path, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            try (DirectoryStream<Path> children = Files.newDirectoryStream(path)) {
                for (Path child : children) {
                    delete(child);
                }
            }
        }
        Files.deleteIfExists(path);
    }
}
