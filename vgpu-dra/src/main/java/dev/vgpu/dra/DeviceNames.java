package dev.vgpu.dra;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Snapshot;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A device's name in this driver's pool: {@code pci-<bdf with ':' and '.' as '-'>} for a PCI function,
 * {@code mdev-<uuid>} for a mediated device. Both are DNS labels (at most 63 characters of {@code [a-z0-9-]}), as a
 * ResourceSlice device name must be; a raw BDF is not (docs/DRA.md §4). The ResourceSlice publisher and Prepare
 * both name devices with it.
 */
public final class DeviceNames {

    private static final String PCI = "pci-";

    private DeviceNames() {
    }

    /** The pool name of one device. */
    public static String of(Device device) {
        String id = device.id().toLowerCase(Locale.ROOT);
        return device.attachment() == Attachment.MEDIATED ? "mdev-" + id
                : PCI + id.replace(':', '-').replace('.', '-');
    }

    /** The PCI address a {@code pci-} name stands for; empty for an mdev's name or anything else. */
    public static Optional<PciAddress> pciAddress(String name) {
        if (!name.startsWith(PCI)) {
            return Optional.empty();
        }
        String[] parts = name.substring(PCI.length()).split("-", -1);
        if (parts.length != 4) {
            return Optional.empty();
        }
        String bdf = parts[0] + ":" + parts[1] + ":" + parts[2] + "." + parts[3];
        return PciAddress.isValid(bdf) ? Optional.of(PciAddress.parse(bdf)) : Optional.empty();
    }

    /** Every advertised device of the snapshot by its pool name. */
    public static Map<String, Device> index(Snapshot snapshot) {
        Map<String, Device> byName = new HashMap<>();
        snapshot.resources().values().forEach(r -> r.devices().forEach(d -> byName.put(of(d), d)));
        return byName;
    }
}
