package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The steps that make one card hold what was asked, in the order they run: enabling VFs, then every clear, then
 * every set (lowest VF address first), so each type id is written while the card has the most room.
 *
 * <p>{@code readAgain} is true when the steps only enable the card's VFs: the VFs (and their catalogs) do not exist
 * before that, so the rest can be planned only on a fresh read of the card. The {@link Applier} reads and plans
 * again; a dry run says that more steps follow.
 *
 * @param card      the card
 * @param steps     the writes, in order
 * @param readAgain whether the card must be read and planned again after these steps
 */
public record CardPlan(PciAddress card, List<Step> steps, boolean readAgain) implements CardDecision {

    /** Checks and copies. */
    public CardPlan {
        Objects.requireNonNull(card, "card");
        steps = List.copyOf(steps);
        if (readAgain && steps.isEmpty()) {
            throw new IllegalArgumentException("a plan that reads the card again has a step before that");
        }
    }

    /** The plan of a card that already holds what was asked. */
    public static CardPlan nothing(PciAddress card) {
        return new CardPlan(card, List.of(), false);
    }

    /** True when there is nothing to write. */
    public boolean isEmpty() {
        return steps.isEmpty() && !readAgain;
    }

    /** One line per step, then {@code then read the card again and plan the rest} when {@code readAgain}. */
    public List<String> describe() {
        List<String> lines = new ArrayList<>();
        steps.forEach(step -> lines.add(step.describe()));
        if (readAgain) {
            lines.add("then read card " + card + " again (its VFs and their types exist only once enabled)"
                    + " and plan the rest");
        }
        return lines;
    }
}
