package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What one card is asked to hold or change. Three shapes, so that the planner never assumes a whole layout:
 * <ul>
 * <li>{@link Layout}: the card holds exactly these counts afterwards (what {@code configure} and a restore after
 *     a reboot ask). Idempotent: a card that already matches needs no step.</li>
 * <li>{@link Acquire}: {@code count} new vGPUs of one profile on free VFs, beside whatever the card holds (what a
 *     DRA Prepare of a partitionable device will ask: "one VF of profile P on card C"). Not idempotent: each
 *     acquisition creates vGPUs; the plan's {@link Step.SetType} steps name the VFs that get them.</li>
 * <li>{@link Release}: clear these VFs (what an Unprepare gives back).</li>
 * </ul>
 * Profiles are named in full ({@code NVIDIA L40S-4Q}) or without {@code NVIDIA } ({@code L40S-4Q}).
 * <pre>{@code
 * CardDemand whole = CardDemand.layout(Map.of("L40S-12Q", 4));
 * CardDemand one = CardDemand.acquire("L40S-12Q", 1);
 * CardDemand back = CardDemand.release(PciAddress.parse("0000:41:00.5"));
 * }</pre>
 */
public sealed interface CardDemand permits CardDemand.Layout, CardDemand.Acquire, CardDemand.Release {

    /** The whole layout of a card. */
    static Layout layout(Map<String, Integer> counts) {
        return new Layout(counts);
    }

    /** {@code count} more vGPUs of a profile. */
    static Acquire acquire(String profile, int count) {
        return new Acquire(profile, count);
    }

    /** Clear these VFs. */
    static Release release(PciAddress... vfs) {
        return new Release(Set.of(vfs));
    }

    /** The demand in words, for logs and a dry run. */
    String describe();

    /**
     * Exactly these vGPUs on the card: profile → count. A profile with count 0 is checked (it must exist) but asks
     * for nothing; profiles not listed are cleared; the empty layout clears every vGPU. VFs are enabled when the
     * card has none and the layout needs some.
     *
     * @param counts profile name (full or short) → how many VFs hold it, each at least 0
     */
    record Layout(Map<String, Integer> counts) implements CardDemand {

        /** Checks and copies (sorted by name). */
        public Layout {
            Map<String, Integer> sorted = new TreeMap<>();
            counts.forEach((profile, count) -> {
                requireProfile(profile);
                if (count == null || count < 0) {
                    throw new IllegalArgumentException("the count of profile " + ProfileNames.quoted(profile)
                            + " must be 0 or more, got " + count);
                }
                sorted.put(profile, count);
            });
            counts = java.util.Collections.unmodifiableMap(sorted);
        }

        /** How many vGPUs the layout asks for in all. */
        public int total() {
            return counts.values().stream().mapToInt(Integer::intValue).sum();
        }

        @Override
        public String describe() {
            if (total() == 0) {
                return "no vGPUs";
            }
            StringBuilder words = new StringBuilder();
            counts.forEach((profile, count) -> {
                if (count > 0) {
                    words.append(words.length() == 0 ? "" : ", ").append(count).append(" × ")
                            .append(ProfileNames.quoted(profile));
                }
            });
            return words.toString();
        }
    }

    /**
     * New vGPUs of one profile on free VFs (no vGPU, not in use), lowest addresses first.
     *
     * @param profile the profile, full or short
     * @param count   how many, at least 1
     */
    record Acquire(String profile, int count) implements CardDemand {

        /** Checks. */
        public Acquire {
            requireProfile(profile);
            if (count < 1) {
                throw new IllegalArgumentException("acquire at least one vGPU, got " + count);
            }
        }

        @Override
        public String describe() {
            return count + " more × " + ProfileNames.quoted(profile);
        }
    }

    /**
     * Clear these VFs' vGPUs. A VF without one needs nothing.
     *
     * @param vfs the VFs, at least one
     */
    record Release(Set<PciAddress> vfs) implements CardDemand {

        /** Checks and copies. */
        public Release {
            vfs = Set.copyOf(vfs);
            if (vfs.isEmpty()) {
                throw new IllegalArgumentException("release at least one VF");
            }
        }

        @Override
        public String describe() {
            return "release " + new TreeSet<>(vfs);
        }
    }

    private static void requireProfile(String profile) {
        Objects.requireNonNull(profile, "profile");
        if (profile.isBlank()) {
            throw new IllegalArgumentException("a profile name must not be blank");
        }
    }
}
