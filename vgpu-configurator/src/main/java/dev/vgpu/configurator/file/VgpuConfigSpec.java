package dev.vgpu.configurator.file;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One entry of a named layout in a vgpu-device-manager file: which cards it is for and what each of them holds.
 * <pre>
 * - devices: all                    # or [0, 1]: GPU indexes
 *   device-filter: "0x26B910DE"     # optional; or a list: PCI device id &lt;&lt; 16 | vendor id
 *   vgpu-devices: {"L40S-12Q": 4}   # profile (full or short name) → count
 * </pre>
 *
 * @param path         where the entry is in the file ({@code vgpu-configs.default[0]}), for messages
 * @param indexes      the GPU indexes it is for; empty for {@code devices: all}
 * @param deviceFilter the device-vendor ids it is for (any of them); empty for every card
 * @param vgpuDevices  profile → count, each count at least 0; empty clears the cards it is for
 */
public record VgpuConfigSpec(String path, Optional<SortedSet<Integer>> indexes, SortedSet<Long> deviceFilter,
                             Map<String, Integer> vgpuDevices) {

    /** Checks and copies. */
    public VgpuConfigSpec {
        Objects.requireNonNull(path, "path");
        indexes = indexes.map(set -> Collections.unmodifiableSortedSet(new TreeSet<>(set)));
        deviceFilter = Collections.unmodifiableSortedSet(new TreeSet<>(deviceFilter));
        vgpuDevices = Collections.unmodifiableMap(new TreeMap<>(vgpuDevices));
        indexes.ifPresent(set -> set.forEach(index -> {
            if (index < 0) {
                throw new IllegalArgumentException(path + ": a GPU index is 0 or more, got " + index);
            }
        }));
        vgpuDevices.forEach((profile, count) -> {
            if (profile.isBlank() || count == null || count < 0) {
                throw new IllegalArgumentException(path + ": a profile needs a name and a count of 0 or more");
            }
        });
    }

    /**
     * Whether the entry is for the card with this GPU index and {@code device << 16 | vendor} id: its index is listed
     * (or {@code devices: all}) and its id passes the filter (or there is none).
     */
    public boolean matches(int index, long deviceVendorId) {
        boolean device = indexes.map(set -> set.contains(index)).orElse(true);
        return device && (deviceFilter.isEmpty() || deviceFilter.contains(deviceVendorId));
    }

    /** What it is for, in words: {@code GPUs [0, 1] with device id 0x26B910DE}. */
    public String describeTarget() {
        String devices = indexes.map(set -> "GPU" + (set.size() == 1 ? " " : "s ") + (set.size() == 1
                ? set.first().toString() : List.copyOf(set).toString())).orElse("every GPU");
        if (deviceFilter.isEmpty()) {
            return devices;
        }
        return devices + " with device id " + String.join(" or ", deviceFilter.stream()
                .map(id -> String.format("0x%08X", id)).toList());
    }
}
