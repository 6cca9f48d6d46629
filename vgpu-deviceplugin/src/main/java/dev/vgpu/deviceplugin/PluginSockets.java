package dev.vgpu.deviceplugin;

import dev.vgpu.core.ResourceName;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Where a resource's plugin socket goes: {@code <dir>/<file>}, with the file name that
 * {@link ResourceName#socketFileName(int)} gives for what the directory leaves of a unix socket path
 * (docs/HOST-FACTS.md §2.4). The identity of the socket bound there is {@link UnixDomainTransport#socketKey}.
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

    /** The bytes {@code dir} takes in a socket path, for messages. */
    static int directoryBytes(Path dir) {
        return UnixDomainTransport.pathBytes(dir);
    }
}
