package dev.vgpu.configurator;

import dev.vgpu.configurator.CardRefusal.Kind;
import dev.vgpu.configurator.CardRefusal.Reason;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;

/**
 * The planner's questions about profiles on one card: which type a name is, and whether sizes mix. Every answer
 * that is a refusal is added to the caller's list of reasons as a sentence naming the card. Stateless.
 */
final class Profiles {

    /** Names listed at most in a message; the rest are counted. */
    private static final int LISTED = 16;

    private Profiles() {
    }

    /**
     * A profile the card names.
     *
     * @param asked  the name the demand used
     * @param typeId the card's id for it
     * @param name   the card's name for it
     */
    record Resolved(String asked, long typeId, String name) {
    }

    /**
     * The card's type for a profile name; null when there is none, with a reason added, or (when
     * {@code deferrable} and the card has no VFs and knows no name yet) without one: the name can be checked
     * only once its VFs are enabled.
     */
    static Resolved resolve(CardFacts card, String profile, boolean deferrable, List<Reason> reasons) {
        List<Long> ids = card.types().idsOf(profile);
        if (ids.size() == 1) {
            return new Resolved(profile, ids.get(0), card.types().names().get(ids.get(0)));
        }
        if (ids.size() > 1) {
            reasons.add(new Reason(Kind.AMBIGUOUS_PROFILE, "card " + card.pf() + " names profile "
                    + ProfileNames.quoted(profile) + " by several types (" + ids + "), so which one is meant cannot be"
                    + " told"));
        } else if (!(deferrable && card.vfs().isEmpty() && card.types().names().isEmpty())) {
            // Only a card that shows all its types can say a name is none of them; else it may be one not listed now.
            reasons.add(new Reason(card.types().complete() ? Kind.UNKNOWN_PROFILE : Kind.UNLISTED_PROFILE,
                    unknown(card, profile)));
        }
        return null;
    }

    private static String unknown(CardFacts card, String profile) {
        StringBuilder words = new StringBuilder("card ").append(card.pf()).append(" has no vGPU profile ")
                .append(ProfileNames.quoted(profile));
        CardTypes types = card.types();
        if (types.names().isEmpty()) {
            Map<Long, Integer> held = card.vgpuCounts();
            if (!held.isEmpty()) {
                List<String> unnamed = new ArrayList<>();
                held.forEach((id, count) -> unnamed.add(types.describe(id) + " on " + count + " VF"
                        + (count == 1 ? "" : "s")));
                words.append(" that it can name: it lists no type now (a full card lists only the header of its")
                        .append(" creatable_vgpu_types) and nothing names the types its VFs hold (")
                        .append(String.join(", ", unnamed)).append("); name them with a type-name resolver (NVML),")
                        .append(" or clear the card's vGPUs so that it lists its types again");
            } else {
                words.append(": none of its functions lists a type");
            }
        } else {
            List<String> listed = new ArrayList<>();
            new TreeMap<>(types.names()).values().stream().limit(LISTED).forEach(n -> listed.add(
                    ProfileNames.quoted(n)));
            words.append("; it names ").append(String.join(", ", listed));
            if (types.names().size() > LISTED) {
                words.append(" and ").append(types.names().size() - LISTED).append(" more");
            }
            if (!types.complete()) {
                words.append(" (while it holds vGPUs it lists only the types that fit beside them)");
            }
        }
        if (!types.ambiguous().isEmpty()) {
            words.append("; types ").append(types.ambiguous()).append(" are left out because two of its files name"
                    + " them differently");
        }
        return words.toString();
    }

    /**
     * Adds a {@link Kind#MIXED_SIZES} reason when the named profiles state different framebuffer sizes, or when
     * there are several and one states none.
     *
     * @return the one size they share, or empty
     */
    static OptionalInt commonSize(CardFacts card, Collection<String> names, List<Reason> reasons) {
        Map<Integer, List<String>> bySize = new TreeMap<>();
        List<String> unsized = new ArrayList<>();
        for (String name : names) {
            OptionalInt size = ProfileNames.framebufferGb(name);
            if (size.isPresent()) {
                bySize.computeIfAbsent(size.getAsInt(), s -> new ArrayList<>()).add(ProfileNames.quoted(name));
            } else {
                unsized.add(ProfileNames.quoted(name));
            }
        }
        if (names.size() > 1 && !unsized.isEmpty()) {
            reasons.add(new Reason(Kind.MIXED_SIZES, "card " + card.pf() + ": the framebuffer size of "
                    + String.join(", ", unsized) + " cannot be read from the name, so whether the profiles asked"
                    + " together share one size cannot be told; ask for one profile on this card"));
            return OptionalInt.empty();
        }
        if (bySize.size() > 1) {
            List<String> groups = new ArrayList<>();
            bySize.forEach((size, profiles) -> groups.add(size + " GB: " + String.join(", ", profiles)));
            reasons.add(new Reason(Kind.MIXED_SIZES, "card " + card.pf() + " would hold vGPUs of different"
                    + " framebuffer sizes (" + String.join("; ", groups) + "): that needs the driver's mixed-size mode,"
                    + " which the configurator does not set; keep to one size per card"));
            return OptionalInt.empty();
        }
        return bySize.isEmpty() ? OptionalInt.empty() : OptionalInt.of(bySize.keySet().iterator().next());
    }

    /**
     * Adds an {@link Kind#OVER_CAPACITY} reason when the card's framebuffer is known and {@code gb} exceeds it.
     */
    static void checkFramebuffer(CardFacts card, long gb, String what, List<Reason> reasons) {
        OptionalInt framebuffer = card.types().framebufferGb();
        if (framebuffer.isPresent() && gb > framebuffer.getAsInt()) {
            reasons.add(new Reason(Kind.OVER_CAPACITY, what + " needs " + gb + " GB of framebuffer, and card "
                    + card.pf() + " has " + framebuffer.getAsInt() + " GB (its largest profile's size)"));
        }
    }

    /** A count of VFs in words: {@code 1 VF}, {@code 3 VFs}. */
    static String vfs(long count) {
        return count + (count == 1 ? " VF" : " VFs");
    }
}
