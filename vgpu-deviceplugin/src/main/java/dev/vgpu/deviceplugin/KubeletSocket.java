package dev.vgpu.deviceplugin;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.Optional;

/**
 * The identity of one {@code kubelet.sock} file: a restarted kubelet makes a new one (new inode or time).
 *
 * @param fileKey  the file system's key (device and inode on Linux), may be null
 * @param modified the last-modified time of the socket file
 */
record KubeletSocket(Object fileKey, FileTime modified) {

    /** The identity of the socket at {@code path}, empty when there is none. */
    static Optional<KubeletSocket> at(Path path) {
        try {
            BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
            return Optional.of(new KubeletSocket(attributes.fileKey(), attributes.lastModifiedTime()));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
