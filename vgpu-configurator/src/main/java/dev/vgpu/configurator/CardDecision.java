package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;

/** What the {@link Planner} decides for one card: a {@link CardPlan} or a {@link CardRefusal}. */
public sealed interface CardDecision permits CardPlan, CardRefusal {

    /** The card. */
    PciAddress card();
}
