package dev.vgpu.configurator;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The vGPU types one card is known to have: type id → profile name, from every {@code creatable_vgpu_types} of the
 * card (its PF and its VFs) and from a type-name resolver such as NVML. Type ids are card-local: a card's table never
 * names another card's types.
 *
 * <p>A card lists only what it can create <em>now</em>, so the table is partial while the card holds vGPUs (only the
 * types that fit beside them) and empty once the card is full. {@link #complete()} says whether it holds every type
 * the card supports: a resolver answered, or no VF of the card held a vGPU when its catalogs were read.
 *
 * @param names     type id → profile name as the driver prints it, whitespace runs collapsed
 * @param ambiguous type ids that two sources named differently; they are not in {@code names}
 * @param complete  whether every type the card supports is in {@code names}
 */
public record CardTypes(Map<Long, String> names, Set<Long> ambiguous, boolean complete) {

    /** Nothing known. */
    public static final CardTypes NONE = new CardTypes(Map.of(), Set.of(), false);

    /** Copies and checks: no id both named and ambiguous, ids non-negative, names non-blank. */
    public CardTypes {
        names = Map.copyOf(names);
        ambiguous = Set.copyOf(ambiguous);
        names.forEach((id, name) -> {
            if (id < 0 || name.isBlank()) {
                throw new IllegalArgumentException("a type needs a non-negative id and a name, got " + id);
            }
        });
        for (Long id : ambiguous) {
            if (names.containsKey(id)) {
                throw new IllegalArgumentException("type " + id + " is both named and ambiguous");
            }
        }
    }

    /** The profile name of a type id, if known. */
    public Optional<String> name(long typeId) {
        return Optional.ofNullable(names.get(typeId));
    }

    /** A type in words for messages: {@code "NVIDIA L40S-4Q" (type 1150)}, or {@code type 1150} when unnamed. */
    public String describe(long typeId) {
        String name = names.get(typeId);
        return name == null ? "type " + typeId : ProfileNames.quoted(name) + " (type " + typeId + ")";
    }

    /** The ids whose name is {@code profile} (full or without {@code NVIDIA }), ascending. */
    public List<Long> idsOf(String profile) {
        Objects.requireNonNull(profile, "profile");
        List<Long> ids = new ArrayList<>();
        new TreeMap<>(names).forEach((id, name) -> {
            if (ProfileNames.matches(name, profile)) {
                ids.add(id);
            }
        });
        return ids;
    }

    /**
     * The card's framebuffer in GB, taken as the largest size any of its types states (the profile that takes the
     * whole card); empty when the table is not {@link #complete()} or no name states a size.
     */
    public OptionalInt framebufferGb() {
        if (!complete) {
            return OptionalInt.empty();
        }
        return names.values().stream().map(ProfileNames::framebufferGb).filter(OptionalInt::isPresent)
                .mapToInt(OptionalInt::getAsInt).max();
    }

    /** The names of both tables; an id named differently by the two becomes ambiguous. Complete if either is. */
    public CardTypes merge(CardTypes other) {
        Map<Long, String> merged = new TreeMap<>(names);
        Set<Long> conflicts = new TreeSet<>(ambiguous);
        conflicts.addAll(other.ambiguous);
        other.names.forEach((id, name) -> {
            String known = merged.putIfAbsent(id, name);
            if (known != null && !ProfileNames.collapse(known).equals(ProfileNames.collapse(name))) {
                conflicts.add(id);
            }
        });
        conflicts.forEach(merged::remove);
        return new CardTypes(merged, conflicts, complete || other.complete);
    }
}
