package dev.vgpu.deviceplugin;

import dev.vgpu.core.ResourceName;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Optional;

/**
 * Where a resource's plugin socket goes: {@code <dir>/<file>}, with the file name that
 * {@link ResourceName#socketFileName(int)} gives for what the directory leaves of a unix socket path
 * (docs/HOST-FACTS.md §2.4), and the identity of the socket bound there.
 */
final class PluginSockets {

    private PluginSockets() {
    }

    /** The socket of {@code name} in {@code dir}; empty when the directory leaves room for no socket name. */
    static Optional<Path> path(Path dir, ResourceName name) {
        return name.socketFileName(budget(dir)).map(dir::resolve);
    }

    /**
     * The bytes left for a file name in {@code dir}: the limit less the directory and its separator, counted as the
     * path the transport binds spells them ({@code /} as a directory adds no separator of its own).
     */
    static int budget(Path dir) {
        return UnixDomainTransport.MAX_PATH_BYTES - (UnixDomainTransport.pathBytes(dir.resolve("x")) - 1);
    }

    /**
     * The file key (device and inode) of the socket at {@code socket}, links not followed; null when it is anything
     * else (gone, or a file renamed over it). Compared with the key right after binding, it also tells another
     * process's socket moved there. A stat; any thread.
     */
    static Object key(Path socket) {
        try {
            BasicFileAttributes attributes = Files.readAttributes(socket, BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            if (!attributes.isOther()) {
                return null;
            }
            Object key = attributes.fileKey();
            return key != null ? key : socket;
        } catch (IOException e) {
            return null;
        }
    }

    /** The bytes {@code dir} takes in a socket path, for messages. */
    static int directoryBytes(Path dir) {
        return UnixDomainTransport.pathBytes(dir);
    }
}
