package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import java.util.List;
import java.util.Objects;

/**
 * Why a card is left alone: one or more reasons, each with a {@link Kind} a caller can act on (an unknown profile
 * is a mistake in the file; a VF in use is a reason to wait) and a sentence naming the card, the profile or the VF.
 *
 * @param card    the card
 * @param reasons at least one
 */
public record CardRefusal(PciAddress card, List<Reason> reasons) implements CardDecision {

    /** Checks and copies. */
    public CardRefusal {
        Objects.requireNonNull(card, "card");
        reasons = List.copyOf(reasons);
        if (reasons.isEmpty()) {
            throw new IllegalArgumentException("a refusal of card " + card + " needs a reason");
        }
    }

    /** True when one of the reasons is of this kind. */
    public boolean has(Kind kind) {
        return reasons.stream().anyMatch(reason -> reason.kind() == kind);
    }

    /** Every reason's sentence, joined with {@code "; "}. */
    public String describe() {
        return String.join("; ", reasons.stream().map(Reason::message).toList());
    }

    /**
     * One reason.
     *
     * @param kind    what sort of reason
     * @param message a sentence naming the card and what is wrong (host text escaped)
     */
    public record Reason(Kind kind, String message) {

        /** Checks. */
        public Reason {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(message, "message");
        }
    }

    /** What sort of reason. */
    public enum Kind {
        /** No card with that address can host vendor-VFIO vGPUs (absent, not NVIDIA, not SR-IOV, not on nvidia). */
        UNKNOWN_CARD,
        /** Part of the card could not be read. */
        UNREADABLE,
        /** The card has no type of that name: it showed all its types, and none is called so. */
        UNKNOWN_PROFILE,
        /**
         * The card does not name the profile now and cannot show all its types: it lists only what fits beside the
         * vGPUs it holds (nothing when full), and no resolver named it. It may exist; NVML's names, or a card
         * cleared of its vGPUs, tell.
         */
        UNLISTED_PROFILE,
        /** The card names two types the same, or one type two ways. */
        AMBIGUOUS_PROFILE,
        /** The card would hold vGPUs of different framebuffer sizes, which needs a driver mode this does not set. */
        MIXED_SIZES,
        /** The demand needs a VF that is in use. */
        VF_IN_USE,
        /** More vGPUs than the card has VFs or framebuffer for, or no room for the profile now. */
        OVER_CAPACITY,
        /** The card has no VFs and none can be enabled. */
        NO_VFS,
        /** The demand itself does not fit the card (a VF of another card, one profile named twice). */
        INVALID_DEMAND
    }
}
