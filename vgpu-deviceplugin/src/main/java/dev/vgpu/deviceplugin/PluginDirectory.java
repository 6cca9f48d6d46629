package dev.vgpu.deviceplugin;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Re-creates the device-plugin directory when it is gone (a kubelet that restarts empties it; an operator may
 * remove it), as {@code 0750} whatever the umask: a mode asked for at creation is only ever narrowed by the umask,
 * never widened, so under umask {@code 000} the directory is not world-writable (docs/RELIABILITY.md, "The kubelet
 * and the sockets"). Only the missing directories are created; an existing one keeps its mode. Stateless.
 */
final class PluginDirectory {

    private static final FileAttribute<?> OWNER_AND_GROUP =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-x---"));

    private PluginDirectory() {
    }

    /** Creates {@code dir} and its missing parents, each {@code 0750} on a POSIX file system. */
    static void create(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            return;
        }
        if (dir.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            Files.createDirectories(dir, OWNER_AND_GROUP);
        } else {
            Files.createDirectories(dir);
        }
    }
}
