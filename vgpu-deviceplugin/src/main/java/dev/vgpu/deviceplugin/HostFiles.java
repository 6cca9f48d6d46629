package dev.vgpu.deviceplugin;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.AttributeFiles;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The sysfs facts that GPU-fault marking reads under the host root: which VFs a physical GPU has. What a VM needs
 * for a device (groups, nodes, cdevs, EGM) is {@link dev.vgpu.attach.Handovers}' to read.
 *
 * <p>Stateless and thread-safe; every method reads the file system anew, through core's one reader of listings and
 * links ({@link AttributeFiles}): only a link's last path component is used, as the kernel's relative links require.
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
        try {
            for (String name : AttributeFiles.list(dir)) {
                if (VIRTFN.matcher(name).matches()) {
                    vf(dir, name).ifPresent(out::add);
                }
            }
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
        out.sort(null);
        return out;
    }

    /** The VF one {@code virtfnN} link names; empty when it is unreadable or names no PCI address. */
    private static Optional<PciAddress> vf(Path dir, String link) {
        try {
            String name = AttributeFiles.linkName(dir, link);
            return PciAddress.isValid(name) ? Optional.of(PciAddress.parse(name)) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
