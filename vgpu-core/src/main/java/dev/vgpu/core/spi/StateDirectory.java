package dev.vgpu.core.spi;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A directory where sources may keep what they learned about the host, so that it survives a restart of the
 * process (the {@code vendor-vfio} source keeps the vGPU profile names it learned there). Each source owns its own
 * files in it and reads them back under its own rules; core only carries the path and never touches the files.
 *
 * <p>A directory given {@link #forReading(Path) for reading} is only read: a one-shot command may show what a
 * restart of the daemon would use without changing the daemon's files. A {@link #of(Path) writable} one is created
 * (owner-only) by the first source that writes there.
 * <pre>{@code
 * Host host = Host.of(Path.of("/")).withStateDirectory(StateDirectory.of(Path.of("/var/lib/vgpu")));
 * }</pre>
 * One directory belongs to one host: two hosts (or two daemons) sharing it would overwrite each other's files.
 * It must not be the kubelet's device-plugin directory, which the kubelet empties when it restarts.
 *
 * @param path     the directory (it may not exist yet)
 * @param mayWrite whether sources may create and write files there
 */
public record StateDirectory(Path path, boolean mayWrite) {

    /** Validates that the path is given. */
    public StateDirectory {
        Objects.requireNonNull(path, "path");
    }

    /** A directory sources read from and write to. */
    public static StateDirectory of(Path path) {
        return new StateDirectory(path, true);
    }

    /** A directory sources only read from (they never create, write or delete anything there). */
    public static StateDirectory forReading(Path path) {
        return new StateDirectory(path, false);
    }
}
