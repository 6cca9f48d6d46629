package dev.vgpu.core;

import dev.vgpu.core.internal.Printable;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a source read about a device beyond what advertising it needs, for consumers that describe devices to a
 * scheduler (the DRA plugin's ResourceSlice attributes, docs/DRA.md §4). Plain text and numbers as the host wrote
 * them; core never reads them from anywhere. Every fact is optional: a custom source may record none.
 *
 * @param profile    the vGPU profile or mdev type name as the host writes it (whitespace runs as one space), or a
 *                   passthrough GPU's pci.ids name (its 4-hex device id without one); 1-256 printable characters
 * @param deviceId   the PCI device id, four lower-case hex digits: a PCI function's own, an mdev's parent's
 * @param vgpuTypeId a VF's vGPU type id ({@code nvidia/current_vgpu_type}), non-negative
 * @param pcieRoot   the PCI root complex a PCI function sits under, as {@code pci<domain>:<bus>} (e.g.
 *                   {@code pci0000:40}), from its {@code sys/bus/pci/devices/<bdf>} link; never for an mdev
 */
public record DeviceFacts(Optional<String> profile, Optional<String> deviceId, OptionalLong vgpuTypeId,
                          Optional<String> pcieRoot) {

    /** No facts at all. */
    public static final DeviceFacts NONE = new DeviceFacts(Optional.empty(), Optional.empty(), OptionalLong.empty(),
            Optional.empty());

    /** Validates every fact. */
    public DeviceFacts {
        Objects.requireNonNull(profile, "profile");
        Objects.requireNonNull(deviceId, "deviceId");
        Objects.requireNonNull(vgpuTypeId, "vgpuTypeId");
        Objects.requireNonNull(pcieRoot, "pcieRoot");
        profile.ifPresent(p -> {
            if (!isProfile(p)) {
                throw new IllegalArgumentException("a profile name has 1-256 printable characters, got \""
                        + Printable.of(p) + "\"");
            }
        });
        // Checked by hand, not by a regular expression: every device of every scan is checked several times.
        deviceId.ifPresent(d -> require(d.length() == 4 && isLowerHex(d, 0, 4), d,
                "a device id is four lower-case hex digits"));
        pcieRoot.ifPresent(r -> require(isPcieRoot(r), r, "a PCIe root is pci<domain>:<bus> in lower-case hex"));
        if (vgpuTypeId.isPresent() && vgpuTypeId.getAsLong() < 0) {
            throw new IllegalArgumentException("a vGPU type id is non-negative, got " + vgpuTypeId.getAsLong());
        }
    }

    /** Whether {@code name} may be a {@link #profile()}: 1-256 characters that {@link Printable} leaves alone. */
    public static boolean isProfile(String name) {
        return name != null && !name.isEmpty() && name.length() <= 256 && Printable.isPlain(name);
    }

    /** These facts with {@code profile}; null leaves it empty. */
    public DeviceFacts withProfile(String value) {
        return new DeviceFacts(Optional.ofNullable(value), deviceId, vgpuTypeId, pcieRoot);
    }

    /** These facts with {@code deviceId}; null leaves it empty. */
    public DeviceFacts withDeviceId(String value) {
        return new DeviceFacts(profile, Optional.ofNullable(value), vgpuTypeId, pcieRoot);
    }

    /** These facts with {@code vgpuTypeId}. */
    public DeviceFacts withVgpuTypeId(long value) {
        return new DeviceFacts(profile, deviceId, OptionalLong.of(value), pcieRoot);
    }

    /** These facts with {@code pcieRoot}; null leaves it empty. */
    public DeviceFacts withPcieRoot(String value) {
        return new DeviceFacts(profile, deviceId, vgpuTypeId, Optional.ofNullable(value));
    }

    private static void require(boolean valid, String value, String rule) {
        if (!valid) {
            throw new IllegalArgumentException(rule + ", got \"" + Printable.of(value) + "\"");
        }
    }

    /** {@code pci}, 4-8 lower-case hex digits, {@code :}, 2 lower-case hex digits. */
    private static boolean isPcieRoot(String text) {
        int colon = text.length() - 3;
        return colon >= 7 && colon <= 11 && text.startsWith("pci") && text.charAt(colon) == ':'
                && isLowerHex(text, 3, colon) && isLowerHex(text, colon + 1, text.length());
    }

    private static boolean isLowerHex(String text, int from, int to) {
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return true;
    }
}
