package dev.vgpu.core;

import dev.vgpu.core.internal.Printable;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Which devices a configuration rule is about: every field given must match, and at least one is given.
 * <pre>{@code
 * DeviceMatch.source("passthrough")                                  // every whole GPU
 * new DeviceMatch(Optional.empty(), Optional.of("26b9"), Optional.of("NVIDIA L40S-1Q"), Optional.empty())
 * DeviceMatch.address("0000:65:00.0")                                // one function (or an mdev's UUID)
 * }</pre>
 *
 * @param source   a source name ({@code passthrough}, {@code mdev}, {@code vendor-vfio} or a custom one)
 * @param deviceId four hex digits, the PCI device id of the function (a VF's own) or of an mdev's parent; kept in
 *                 lowercase
 * @param profile  a vGPU profile name (vendor-vfio) or mdev type name, such as {@code NVIDIA L40S-1Q}; it matches
 *                 a device on a physical GPU (a VF or an mdev) whose source named its resource after this name, so
 *                 {@code NVIDIA L40S-1Q} and {@code NVIDIA_L40S-1Q} match the same devices
 * @param address  a BDF ({@code 0000:65:00.0}, any hex case) or an mdev UUID; kept in the kernel's lowercase
 */
public record DeviceMatch(Optional<String> source, Optional<String> deviceId, Optional<String> profile,
                          Optional<String> address) {

    private static final Pattern DEVICE_ID = Pattern.compile("[0-9a-fA-F]{4}");
    private static final Pattern UUID = Pattern.compile(
            "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

    /** Checks each field and that at least one is given; normalizes the device id and address. */
    public DeviceMatch {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(deviceId, "deviceId");
        Objects.requireNonNull(profile, "profile");
        Objects.requireNonNull(address, "address");
        if (source.isEmpty() && deviceId.isEmpty() && profile.isEmpty() && address.isEmpty()) {
            throw new IllegalArgumentException("a match needs at least one of source, deviceId, profile, address");
        }
        source.ifPresent(s -> {
            if (s.isBlank() || !s.strip().equals(s)) {
                throw new IllegalArgumentException("source \"" + Printable.of(s) + "\" is not a source name");
            }
        });
        deviceId = deviceId.map(id -> {
            if (!DEVICE_ID.matcher(id).matches()) {
                throw new IllegalArgumentException("deviceId \"" + Printable.of(id)
                        + "\" is not 4 hex digits (a PCI device id such as \"2331\")");
            }
            return id.toLowerCase(Locale.ROOT);
        });
        profile.ifPresent(p -> {
            if (ResourceName.forVgpuProfile(p).isEmpty()) {
                throw new IllegalArgumentException("profile \"" + Printable.of(p) + "\" names no profile");
            }
        });
        address = address.map(a -> {
            if (PciAddress.isValid(a)) {
                return PciAddress.parse(a).toString();
            }
            if (UUID.matcher(a).matches()) {
                return a.toLowerCase(Locale.ROOT);
            }
            throw new IllegalArgumentException("address \"" + Printable.of(a)
                    + "\" is neither a PCI address (0000:65:00.0) nor an mdev UUID");
        });
    }

    /** Every device of one source. */
    public static DeviceMatch source(String name) {
        return new DeviceMatch(Optional.of(name), Optional.empty(), Optional.empty(), Optional.empty());
    }

    /** Every function with this PCI device id, and every mdev on a GPU with it. */
    public static DeviceMatch deviceId(String id) {
        return new DeviceMatch(Optional.empty(), Optional.of(id), Optional.empty(), Optional.empty());
    }

    /** Every VF or mdev of this profile or mdev type name. */
    public static DeviceMatch profile(String name) {
        return new DeviceMatch(Optional.empty(), Optional.empty(), Optional.of(name), Optional.empty());
    }

    /** One device, by BDF or mdev UUID. */
    public static DeviceMatch address(String bdfOrUuid) {
        return new DeviceMatch(Optional.empty(), Optional.empty(), Optional.empty(), Optional.of(bdfOrUuid));
    }

    /**
     * Whether a device matches, as its source found it (before any rename).
     *
     * @param device   the device with the resource its source gave it
     * @param deviceId the PCI device id of the function or of an mdev's parent (four lowercase hex digits), read
     *                 only when this match names one; empty when it cannot be told
     * @return true when every given field matches
     */
    public boolean matches(Device device, java.util.function.Function<Device, Optional<String>> deviceId) {
        if (source.isPresent() && !source.get().equals(device.source())) {
            return false;
        }
        if (address.isPresent() && !address.get().equals(device.id().toLowerCase(Locale.ROOT))) {
            return false;
        }
        if (profile.isPresent() && (device.parent().isEmpty()
                || !ResourceName.forVgpuProfile(profile.get()).orElseThrow().equals(device.resource()))) {
            return false;
        }
        return this.deviceId.isEmpty() || this.deviceId.equals(deviceId.apply(device));
    }
}
