package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import java.util.List;
import java.util.Objects;

/**
 * What the {@link Applier} did to one card. Five outcomes: {@link Applied}, {@link Unchanged} (both: the card holds
 * what was asked), {@link Refused} (left as it was), {@link RolledBack} (a step failed; the card is as it was) and
 * {@link RollbackFailed} (a step failed and the card could not be put back: it needs a person).
 */
public sealed interface CardOutcome permits CardOutcome.Applied, CardOutcome.Unchanged, CardOutcome.Refused,
        CardOutcome.RolledBack, CardOutcome.RollbackFailed {

    /** The card. */
    PciAddress card();

    /** How many writes were made to the card, rollback included. */
    int writes();

    /** The outcome as a metric label: {@code applied}, {@code unchanged}, {@code refused}, ... */
    String result();

    /** The outcome in one sentence naming the card. */
    String describe();

    /** True for {@link Applied} and {@link Unchanged}: the card holds what was asked. */
    default boolean matches() {
        return this instanceof Applied || this instanceof Unchanged;
    }

    /**
     * The card holds what was asked now; every write was read back.
     *
     * @param card  the card
     * @param steps the steps carried out, in order (one write each)
     */
    record Applied(PciAddress card, List<Step> steps) implements CardOutcome {

        /** Checks and copies. */
        public Applied {
            Objects.requireNonNull(card, "card");
            steps = List.copyOf(steps);
        }

        @Override
        public int writes() {
            return steps.size();
        }

        @Override
        public String result() {
            return "applied";
        }

        @Override
        public String describe() {
            return "card " + card + ": applied in " + writes() + (writes() == 1 ? " write" : " writes");
        }
    }

    /**
     * The card already held what was asked; nothing was written.
     *
     * @param card the card
     */
    record Unchanged(PciAddress card) implements CardOutcome {

        /** Checks. */
        public Unchanged {
            Objects.requireNonNull(card, "card");
        }

        @Override
        public int writes() {
            return 0;
        }

        @Override
        public String result() {
            return "unchanged";
        }

        @Override
        public String describe() {
            return "card " + card + ": already as asked, nothing written";
        }
    }

    /**
     * The card was left as it was. {@code writes} is not 0 only when its VFs were enabled to read its types and
     * disabled again.
     *
     * @param card    the card
     * @param reasons why
     * @param writes  the writes made and undone
     */
    record Refused(PciAddress card, List<CardRefusal.Reason> reasons, int writes) implements CardOutcome {

        /** Checks and copies. */
        public Refused {
            Objects.requireNonNull(card, "card");
            reasons = List.copyOf(reasons);
            if (reasons.isEmpty()) {
                throw new IllegalArgumentException("a refused card needs a reason");
            }
        }

        /** True when one of the reasons is of this kind. */
        public boolean has(CardRefusal.Kind kind) {
            return reasons.stream().anyMatch(reason -> reason.kind() == kind);
        }

        @Override
        public String result() {
            return "refused";
        }

        @Override
        public String describe() {
            return "card " + card + ": refused, left as it was: " + String.join("; ",
                    reasons.stream().map(CardRefusal.Reason::message).toList());
        }
    }

    /**
     * A step failed, and the card was put back exactly as it was (each VF's type and the VF count read back).
     *
     * @param card   the card
     * @param reason what failed
     * @param writes every write made, the undoing included
     */
    record RolledBack(PciAddress card, String reason, int writes) implements CardOutcome {

        /** Checks. */
        public RolledBack {
            Objects.requireNonNull(card, "card");
            Objects.requireNonNull(reason, "reason");
        }

        @Override
        public String result() {
            return "rolled_back";
        }

        @Override
        public String describe() {
            return "card " + card + ": failed and rolled back to how it was: " + reason;
        }
    }

    /**
     * A step failed, and the card could not be put back: it is neither as it was nor as asked.
     *
     * @param card     the card
     * @param reason   what failed first
     * @param problems what the rollback could not do, and how the card differs now
     * @param writes   every write made
     */
    record RollbackFailed(PciAddress card, String reason, List<String> problems, int writes) implements CardOutcome {

        /** Checks and copies. */
        public RollbackFailed {
            Objects.requireNonNull(card, "card");
            Objects.requireNonNull(reason, "reason");
            problems = List.copyOf(problems);
        }

        @Override
        public String result() {
            return "rollback_failed";
        }

        @Override
        public String describe() {
            return "card " + card + ": FAILED AND NOT ROLLED BACK, check it by hand: " + reason + "; rollback: "
                    + String.join("; ", problems);
        }
    }
}
