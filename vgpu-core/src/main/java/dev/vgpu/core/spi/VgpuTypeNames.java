package dev.vgpu.core.spi;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The vGPU profile names a physical GPU supports, keyed by the card-local type id, or why they are unknown.
 *
 * @param names type id to profile name, e.g. {@code 1428 -> "NVIDIA H200X-141C"}
 * @param error why the names could not be read (an NVML error name, for example); empty on success
 */
public record VgpuTypeNames(Map<Long, String> names, Optional<String> error) {

    /** Copies the map. */
    public VgpuTypeNames {
        names = Map.copyOf(names);
        Objects.requireNonNull(error, "error");
    }

    /** A successful answer. */
    public static VgpuTypeNames of(Map<Long, String> names) {
        return new VgpuTypeNames(names, Optional.empty());
    }

    /** No answer, with the reason. */
    public static VgpuTypeNames unavailable(String reason) {
        return new VgpuTypeNames(Map.of(), Optional.of(reason));
    }

    /** The profile name of a type id, if known. */
    public Optional<String> name(long typeId) {
        return Optional.ofNullable(names.get(typeId));
    }
}
