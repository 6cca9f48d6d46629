package dev.vgpu.core.spi;

import dev.vgpu.core.PciIds;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Everything a source may read: the host root and optional helpers.
 *
 * <p>The root is a {@link Path} on any file system (the default one, or jimfs in tests); sources resolve
 * relative paths such as {@code sys/bus/pci/devices} against it and never use absolute paths.
 *
 * @param root      the directory that stands for the host's {@code /}
 * @param pciIds    device names from pci.ids ({@link PciIds#empty()} when not available)
 * @param vgpuTypes vGPU type names per physical GPU ({@link VgpuTypeResolver#none()} when not available)
 */
public record Host(Path root, PciIds pciIds, VgpuTypeResolver vgpuTypes) {

    /** Validates that nothing is null. */
    public Host {
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(pciIds, "pciIds");
        Objects.requireNonNull(vgpuTypes, "vgpuTypes");
    }

    /** A host with no helpers. */
    public static Host of(Path root) {
        return new Host(root, PciIds.empty(), VgpuTypeResolver.none());
    }

    /** A copy with other pci.ids names. */
    public Host withPciIds(PciIds names) {
        return new Host(root, names, vgpuTypes);
    }

    /** A copy with another vGPU type resolver. */
    public Host withVgpuTypes(VgpuTypeResolver resolver) {
        return new Host(root, pciIds, resolver);
    }

    /** Resolves a path relative to the root, e.g. {@code host.path("sys/bus/pci/devices")}. */
    public Path path(String relative) {
        if (relative.startsWith("/")) {
            throw new IllegalArgumentException("host paths are relative to the root: " + relative);
        }
        return root.resolve(relative);
    }
}
