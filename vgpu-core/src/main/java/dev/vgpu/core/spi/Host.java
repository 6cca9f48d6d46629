package dev.vgpu.core.spi;

import dev.vgpu.core.PciIds;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Everything a source may read: the host root, optional helpers, and the memo of the scan in progress.
 *
 * <p>The root is a {@link Path} on any file system (the default one, or jimfs in tests); sources resolve
 * relative paths such as {@code sys/bus/pci/devices} against it and never use absolute paths.
 *
 * <p>Whoever runs a scan gives every source one host made by {@link #forScan()}, so that sources reading the same
 * file read it once in that scan (see {@link ScanScope}), and makes a new one for the next scan:
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
 * @param root      the directory that stands for the host's {@code /}
 * @param pciIds    device names from pci.ids ({@link PciIds#empty()} when not available)
 * @param vgpuTypes vGPU type names per physical GPU ({@link VgpuTypeResolver#none()} when not available)
 * @param scanScope the memo of one scan ({@link ScanScope#none()} when the host is not tied to one scan)
 */
public record Host(Path root, PciIds pciIds, VgpuTypeResolver vgpuTypes, ScanScope scanScope) {

    /** Validates that nothing is null. */
    public Host {
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(pciIds, "pciIds");
        Objects.requireNonNull(vgpuTypes, "vgpuTypes");
        Objects.requireNonNull(scanScope, "scanScope");
    }

    /** A host tied to no scan ({@link ScanScope#none()}). */
    public Host(Path root, PciIds pciIds, VgpuTypeResolver vgpuTypes) {
        this(root, pciIds, vgpuTypes, ScanScope.none());
    }

    /** A host with no helpers, tied to no scan. */
    public static Host of(Path root) {
        return new Host(root, PciIds.empty(), VgpuTypeResolver.none());
    }

    /** A copy with other pci.ids names (and the same scan scope). */
    public Host withPciIds(PciIds names) {
        return new Host(root, names, vgpuTypes, scanScope);
    }

    /** A copy with another vGPU type resolver (and the same scan scope). */
    public Host withVgpuTypes(VgpuTypeResolver resolver) {
        return new Host(root, pciIds, resolver, scanScope);
    }

    /** A copy with another scan scope; {@link ScanScope#none()} unties it from any scan. */
    public Host withScanScope(ScanScope scope) {
        return new Host(root, pciIds, vgpuTypes, scope);
    }

    /**
     * A copy for one new scan: the same root and helpers with a {@link ScanScope#fresh() fresh} scan scope. Call it
     * once per scan and give the result to every source of that scan; never keep it for the next scan.
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
