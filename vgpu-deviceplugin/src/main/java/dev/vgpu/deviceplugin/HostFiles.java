package dev.vgpu.deviceplugin;

import dev.vgpu.core.PciAddress;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The sysfs facts that GPU-fault marking reads under the host root: which VFs a physical GPU has. What a VM needs
 * for a device (groups, nodes, cdevs, EGM) is {@link dev.vgpu.attach.Handovers}' to read.
 *
 * <p>Stateless and thread-safe; every method reads the file system anew. Symlinks are read with
 * {@code readlink} and only their last path component is used, as the kernel's relative links require.
 */
final class HostFiles {

    private static final Pattern VIRTFN = Pattern.compile("virtfn[0-9]{1,5}");

    private final Path root;

    HostFiles(Path root) {
        this.root = root;
    }

    /** The VFs a PF links with {@code virtfnN}, sorted; empty for a function without VFs or when unreadable. */
    List<PciAddress> virtualFunctions(PciAddress pf) {
        Path dir = root.resolve("sys/bus/pci/devices").resolve(pf.toString());
        List<PciAddress> out = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                if (VIRTFN.matcher(entry.getFileName().toString()).matches()) {
                    linkName(entry).filter(PciAddress::isValid).map(PciAddress::parse).ifPresent(out::add);
                }
            }
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
        out.sort(null);
        return out;
    }

    private static Optional<String> linkName(Path link) {
        try {
            Path target = Files.readSymbolicLink(link).getFileName();
            return target == null ? Optional.empty() : Optional.of(target.toString());
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
