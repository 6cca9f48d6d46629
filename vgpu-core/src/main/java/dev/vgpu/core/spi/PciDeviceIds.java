package dev.vgpu.core.spi;

import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import java.io.IOException;
import java.util.Locale;
import java.util.Optional;

/**
 * The PCI device id of a function, from its sysfs {@code device} attribute ({@code 0x2331} → {@code 2331}), memoized
 * in the host's scan scope. Used where configuration rules name device ids (docs/ARCHITECTURE.md, "Configuration").
 */
final class PciDeviceIds {

    private record Key(PciAddress function) {
    }

    /** The id, or why not: a value so that a failure is shared by the scan's callers too. */
    private record Answer(String id) {
    }

    private PciDeviceIds() {
    }

    /** Four lowercase hex digits, or empty when the function's {@code device} file is missing or not an id. */
    static Optional<String> of(Host host, PciAddress function) {
        Answer answer = host.scanScope().computeIfAbsent(new Key(function), key -> new Answer(read(host, function)));
        return Optional.ofNullable(answer.id());
    }

    /** The id of a device's own function, or of its parent when it is not a PCI function (an mdev). */
    static Optional<String> of(Host host, Device device) {
        Optional<PciAddress> function = device.pciAddress().or(device::parent);
        return function.isEmpty() ? Optional.empty() : of(host, function.get());
    }

    private static String read(Host host, PciAddress function) {
        try {
            String text = host.files().readStripped(host.path("sys/bus/pci/devices").resolve(function.toString()),
                    "device", host.scanScope()).toLowerCase(Locale.ROOT);
            String hex = text.startsWith("0x") ? text.substring(2) : text;
            return hex.matches("[0-9a-f]{4}") ? hex : null;
        } catch (IOException e) {
            return null;
        }
    }
}
