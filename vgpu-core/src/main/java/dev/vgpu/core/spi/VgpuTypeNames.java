package dev.vgpu.core.spi;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The vGPU profile names a physical GPU supports, keyed by the card-local type id, or why they are unknown.
 *
 * <p>Three outcomes, which a scan treats differently:
 * <ul>
 * <li>{@link #of answered}: the names; a type missing from them is genuinely unknown on that card;</li>
 * <li>{@link #unavailable unavailable}: the resolver is not in use (NVML disabled or absent), which is a normal,
 *     lasting condition: a type only it could name is skipped;</li>
 * <li>{@link #failed failed}: the resolver is in use but could not answer this time (an NVML error such as
 *     {@code GPU_IS_LOST}); the answer says nothing about the card, so a scan keeps what that card had.</li>
 * </ul>
 *
 * @param names  type id to profile name, e.g. {@code 1428 -> "NVIDIA H200X-141C"}
 * @param error  why the names could not be read (an NVML error name, for example); empty on success
 * @param failed true when {@code error} is a failure of a resolver in use, not its absence
 */
public record VgpuTypeNames(Map<Long, String> names, Optional<String> error, boolean failed) {

    /** Copies the map and checks that a failure carries its reason. */
    public VgpuTypeNames {
        names = Map.copyOf(names);
        Objects.requireNonNull(error, "error");
        if (failed && error.isEmpty()) {
            throw new IllegalArgumentException("a failed answer needs its reason");
        }
    }

    /** A successful answer. */
    public static VgpuTypeNames of(Map<Long, String> names) {
        return new VgpuTypeNames(names, Optional.empty(), false);
    }

    /** No answer because the resolver is not in use, with the reason. */
    public static VgpuTypeNames unavailable(String reason) {
        return new VgpuTypeNames(Map.of(), Optional.of(reason), false);
    }

    /** No answer because the resolver in use failed this time, with the reason. */
    public static VgpuTypeNames failed(String reason) {
        return new VgpuTypeNames(Map.of(), Optional.of(reason), true);
    }

    /** The profile name of a type id, if known. */
    public Optional<String> name(long typeId) {
        return Optional.ofNullable(names.get(typeId));
    }
}
