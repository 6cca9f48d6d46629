package dev.vgpu.core.spi;

import dev.vgpu.core.PciIds;
import dev.vgpu.hostfiles.HostFiles;
import dev.vgpu.hostfiles.ScanScope;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything a source may read: the host root, the reader of its files, optional helpers, and the memo of the scan
 * in progress.
 *
 * <p>The root is a {@link Path} on any file system (the default one, or jimfs in tests); sources resolve
 * relative paths such as {@code sys/bus/pci/devices} against it and never use absolute paths.
 *
 * <p>Sources read host files through {@link #files()}, with {@link #scanScope()}: the bounded reader that refuses FIFOs
 * and device nodes unread ({@link HostFiles}). One reader serves every scan of a process: {@link #of(Path)} loads
 * the best one this runtime has, {@link #withFiles} gives the one a caller made (the daemon makes one at start).
 *
 * <p>Whoever runs a scan gives every source one host made by {@link #forScan()} (or, as {@link Scanner} does, with
 * a {@link dev.vgpu.hostfiles.ScanRound}), so that sources reading the same file read it once in that scan (see
 * {@link ScanScope}), and makes a new one for the next scan:
 * <pre>{@code
 * Host base = Host.of(Path.of("/")).withPciIds(names);
 * Host host = base.forScan();                 // once per scan
 * for (DeviceSource source : sources) {
 *     Discovery found = source.discover(host);
 * }
 * }</pre>
 * A host made any other way ({@link #of}, the three-argument constructor) has {@link ScanScope#none()}: sources
 * share nothing, so such a host may be kept and scanned with again and again.
 *
 * <p>A host may name a {@link StateDirectory} ({@link #withStateDirectory}) where sources keep what they learned
 * across restarts; without one (the default) they keep it in memory only, for the life of the source instance.
 *
 * @param root           the directory that stands for the host's {@code /}
 * @param files          reads the host's files ({@link HostFiles#load()} unless given)
 * @param pciIds         device names from pci.ids ({@link PciIds#empty()} when not available)
 * @param vgpuTypes      vGPU type names per physical GPU ({@link VgpuTypeResolver#none()} when not available)
 * @param scanScope      the memo of one scan ({@link ScanScope#none()} when the host is not tied to one scan)
 * @param stateDirectory where sources keep what they learned across restarts; empty = nowhere
 */
public record Host(Path root, HostFiles files, PciIds pciIds, VgpuTypeResolver vgpuTypes, ScanScope scanScope,
                   Optional<StateDirectory> stateDirectory) {

    /** Validates that nothing is null. */
    public Host {
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(files, "files");
        Objects.requireNonNull(pciIds, "pciIds");
        Objects.requireNonNull(vgpuTypes, "vgpuTypes");
        Objects.requireNonNull(scanScope, "scanScope");
        Objects.requireNonNull(stateDirectory, "stateDirectory");
    }

    /** A host tied to no scan ({@link ScanScope#none()}), without a state directory. */
    public Host(Path root, HostFiles files, PciIds pciIds, VgpuTypeResolver vgpuTypes) {
        this(root, files, pciIds, vgpuTypes, ScanScope.none(), Optional.empty());
    }

    /**
     * A host with no helpers, tied to no scan, read by the best reader this runtime has ({@link HostFiles#load()}:
     * a new one, so keep the host rather than making one per call).
     */
    public static Host of(Path root) {
        return of(root, HostFiles.load());
    }

    /** A host with no helpers, tied to no scan, read by {@code files}. */
    public static Host of(Path root, HostFiles files) {
        return new Host(root, files, PciIds.empty(), VgpuTypeResolver.none());
    }

    /** A copy with other pci.ids names (and the same scan scope and state directory). */
    public Host withPciIds(PciIds names) {
        return new Host(root, files, names, vgpuTypes, scanScope, stateDirectory);
    }

    /** A copy with another vGPU type resolver (and the same scan scope and state directory). */
    public Host withVgpuTypes(VgpuTypeResolver resolver) {
        return new Host(root, files, pciIds, resolver, scanScope, stateDirectory);
    }

    /** A copy read by another reader (and the same scan scope and state directory). */
    public Host withFiles(HostFiles reader) {
        return new Host(root, reader, pciIds, vgpuTypes, scanScope, stateDirectory);
    }

    /** A copy with another scan scope; {@link ScanScope#none()} unties it from any scan. */
    public Host withScanScope(ScanScope scope) {
        return new Host(root, files, pciIds, vgpuTypes, scope, stateDirectory);
    }

    /** A copy whose sources keep what they learn in {@code directory} (read and written). */
    public Host withStateDirectory(Path directory) {
        return withStateDirectory(StateDirectory.of(directory));
    }

    /** A copy with this state directory ({@link StateDirectory#forReading} for one that is only read). */
    public Host withStateDirectory(StateDirectory directory) {
        return new Host(root, files, pciIds, vgpuTypes, scanScope, Optional.of(directory));
    }

    /**
     * A copy for one new scan: the same root, helpers and state directory with a {@link ScanScope#fresh() fresh}
     * scan scope. Call it once per scan and give the result to every source of that scan; never keep it for the next
     * scan.
     */
    public Host forScan() {
        return withScanScope(ScanScope.fresh());
    }

    /** Resolves a path relative to the root, e.g. {@code host.path("sys/bus/pci/devices")}. */
    public Path path(String relative) {
        if (relative.startsWith("/")) {
            throw new IllegalArgumentException("host paths are relative to the root: " + relative);
        }
        return root.resolve(relative);
    }
}
