package dev.vgpu.core.spi;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The vGPU profile names a physical GPU supports, keyed by the card-local type id, or why they are unknown.
 *
 * <p>Three outcomes, which a scan treats differently:
 * <ul>
 * <li>{@link Answered}: the names; a type missing from them is genuinely unknown on that card;</li>
 * <li>{@link Unavailable}: the resolver is not in use (NVML disabled or absent), which is a normal, lasting
 *     condition: a type only it could name is skipped;</li>
 * <li>{@link Failed}: the resolver is in use but could not answer this time (an NVML error such as
 *     {@code GPU_IS_LOST}); the answer says nothing about the card, so a scan keeps what that card had.</li>
 * </ul>
 * <pre>{@code
 * VgpuTypeNames answer = resolver.supportedTypes(pf);
 * if (answer instanceof VgpuTypeNames.Failed failed) {
 *     log.warn("retrying at the next scan: {}", failed.reason());
 * }
 * }</pre>
 */
public sealed interface VgpuTypeNames permits VgpuTypeNames.Answered, VgpuTypeNames.Unavailable,
        VgpuTypeNames.Failed {

    /** A successful answer. */
    static VgpuTypeNames of(Map<Long, String> names) {
        return new Answered(names);
    }

    /** No answer because the resolver is not in use, with the reason. */
    static VgpuTypeNames unavailable(String reason) {
        return new Unavailable(reason);
    }

    /** No answer because the resolver in use failed this time, with the reason. */
    static VgpuTypeNames failed(String reason) {
        return new Failed(reason);
    }

    /** The profile name of a type id; empty when it is not named or there is no answer. */
    default Optional<String> name(long typeId) {
        return this instanceof Answered answered ? Optional.ofNullable(answered.names().get(typeId))
                : Optional.empty();
    }

    /**
     * The resolver answered.
     *
     * @param names type id to profile name, e.g. {@code 1428 -> "NVIDIA H200X-141C"}
     */
    record Answered(Map<Long, String> names) implements VgpuTypeNames {
        /** Copies the map. */
        public Answered {
            names = Map.copyOf(names);
        }
    }

    /**
     * The resolver is not in use (absent, disabled), a lasting condition.
     *
     * @param reason why, e.g. {@code NVML not in use: disabled by --no-nvml}
     */
    record Unavailable(String reason) implements VgpuTypeNames {
        /** Checks that there is a reason. */
        public Unavailable {
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * The resolver in use could not answer this time.
     *
     * @param reason what failed, e.g. an NVML error name; never empty
     */
    record Failed(String reason) implements VgpuTypeNames {
        /** Checks that the failure says what failed. */
        public Failed {
            if (reason == null || reason.isEmpty()) {
                throw new IllegalArgumentException("a failed answer needs its reason");
            }
        }
    }
}
