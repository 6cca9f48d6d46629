package dev.vgpu.configurator;

import dev.vgpu.configurator.CardRefusal.Kind;
import dev.vgpu.configurator.CardRefusal.Reason;
import dev.vgpu.core.PciAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The configurator's planner, a pure function: what a card holds ({@link CardFacts}) and what it is asked for
 * ({@link CardDemand}) give the steps that get it there ({@link CardPlan}) or the reasons it is left alone
 * ({@link CardRefusal}). It reads nothing and writes nothing; the {@link Applier} carries a plan out.
 *
 * <p>The rules (docs/CONFIGURATOR.md):
 * <ul>
 * <li>A VF in use is never written. A layout that would clear one, or that needs more VFs than the card has beside
 *     them, refuses the whole card; a VF in use that holds a type the layout keeps counts toward it.</li>
 * <li>VFs that already hold a wanted type are kept (in use ones first, then the lowest addresses); the others
 *     holding a vGPU are cleared; the missing vGPUs go to the lowest free addresses. A card that already matches
 *     gets the empty plan, so applying twice writes once.</li>
 * <li>Profiles resolve against the card's own types only (ids are card-local): an unknown name, or one the card
 *     names twice, is refused naming the card and the profile. A card that lists nothing yet (no VFs, no PF catalog)
 *     gets a plan that enables its VFs and asks to be read again ({@link CardPlan#readAgain()}).</li>
 * <li>One framebuffer size per card: a demand that mixes sizes (read from the names) is refused, since mixed sizes
 *     need a driver mode the configurator does not set.</li>
 * <li>More vGPUs than the card has (or can enable) VFs is refused, and so is more framebuffer than the card has when
 *     that is known ({@link CardTypes#framebufferGb()}). What only the driver knows (how many of a type really fit)
 *     shows when the applier finds a type no longer listed.</li>
 * <li>VFs are enabled only on a card that has none: all of them ({@code sriov_totalvfs}), as {@code sriov-manage -e}
 *     does. They are never disabled by a plan.</li>
 * </ul>
 * <pre>{@code
 * CardDecision decision = Planner.plan(card, CardDemand.layout(Map.of("L40S-12Q", 4)));
 * if (decision instanceof CardRefusal refusal) {
 *     log.warn("card {} left alone: {}", refusal.card(), refusal.describe());
 * }
 * }</pre>
 */
public final class Planner {

    private Planner() {
    }

    /** Plans one card. A card with {@link CardFacts#problems() problems} is refused. */
    public static CardDecision plan(CardFacts card, CardDemand demand) {
        Objects.requireNonNull(card, "card");
        Objects.requireNonNull(demand, "demand");
        if (!card.problems().isEmpty()) {
            return new CardRefusal(card.pf(), card.problems().stream()
                    .map(problem -> new Reason(Kind.UNREADABLE, "card " + card.pf() + ": " + problem)).toList());
        }
        if (demand instanceof CardDemand.Layout layout) {
            return LayoutPlanner.plan(card, layout);
        }
        if (demand instanceof CardDemand.Acquire acquire) {
            return acquire(card, acquire);
        }
        return release(card, (CardDemand.Release) demand);
    }

    /**
     * Plans every card a demand names, in address order; a card the host does not have is refused
     * ({@link Kind#UNKNOWN_CARD}). Cards without a demand are not in the answer: they are never touched.
     */
    public static Map<PciAddress, CardDecision> plan(HostFacts host, Map<PciAddress, CardDemand> demands) {
        Map<PciAddress, CardDecision> decisions = new TreeMap<>();
        demands.forEach((pf, demand) -> {
            Optional<CardFacts> card = host.card(pf);
            decisions.put(pf, card.isPresent() ? plan(card.get(), demand) : unknownCard(pf));
        });
        return decisions;
    }

    /** The refusal of a card the host does not have. */
    static CardRefusal unknownCard(PciAddress pf) {
        return new CardRefusal(pf, List.of(new Reason(Kind.UNKNOWN_CARD, "the host has no card " + pf
                + " that can host vendor-VFIO vGPUs (an NVIDIA SR-IOV physical function on the nvidia driver)")));
    }

    private static CardDecision acquire(CardFacts card, CardDemand.Acquire acquire) {
        List<Reason> reasons = new ArrayList<>();
        boolean noVfs = card.vfs().isEmpty();
        Profiles.Resolved type = Profiles.resolve(card, acquire.profile(), noVfs, reasons);
        if (noVfs) {
            if (card.totalVfs() == 0) {
                reasons.add(new Reason(Kind.NO_VFS, "card " + card.pf() + " has no VFs and can have none"
                        + " (sriov_totalvfs is 0): it is not in SR-IOV vGPU mode"));
            } else if (acquire.count() > card.totalVfs()) {
                reasons.add(new Reason(Kind.OVER_CAPACITY, "card " + card.pf() + " can have at most "
                        + Profiles.vfs(card.totalVfs()) + ", fewer than the " + acquire.count() + " asked for"));
            }
            return reasons.isEmpty() ? new CardPlan(card.pf(), List.of(new Step.EnableVfs(card.pf(),
                    card.totalVfs())), true) : new CardRefusal(card.pf(), reasons);
        }
        if (type == null) {
            return new CardRefusal(card.pf(), reasons);
        }
        List<String> beside = new ArrayList<>(List.of(type.name()));
        for (Long held : card.vgpuCounts().keySet()) {
            if (held != type.typeId()) {
                Optional<String> name = card.types().name(held);
                if (name.isEmpty()) {
                    reasons.add(new Reason(Kind.MIXED_SIZES, "card " + card.pf() + " holds " + card.types()
                            .describe(held) + ", which nothing names, so whether " + ProfileNames.quoted(type.name())
                            + " has its framebuffer size cannot be told"));
                } else {
                    beside.add(name.get());
                }
            }
        }
        Profiles.commonSize(card, beside, reasons);
        List<VfFacts> free = card.vfs().stream().filter(VfFacts::free).toList();
        if (acquire.count() > free.size()) {
            long used = card.vfs().stream().filter(VfFacts::inUse).count();
            long configured = card.vfs().stream().filter(vf -> vf.configured() && !vf.inUse()).count();
            reasons.add(new Reason(Kind.OVER_CAPACITY, "card " + card.pf() + " has " + Profiles.vfs(free.size())
                    + " free (of " + card.vfs().size() + ": " + used + " in use, " + configured + " holding a vGPU),"
                    + " fewer than the " + acquire.count() + " asked for"));
        } else if (!free.get(0).lists(type.typeId())) {
            reasons.add(new Reason(Kind.OVER_CAPACITY, "card " + card.pf() + " has no room for "
                    + ProfileNames.quoted(type.name()) + " now: its free VFs do not list it (a card lists only what"
                    + " fits beside the vGPUs it holds)"));
        }
        if (!reasons.isEmpty()) {
            return new CardRefusal(card.pf(), reasons);
        }
        return new CardPlan(card.pf(), free.stream().limit(acquire.count())
                .map(vf -> (Step) new Step.SetType(vf.address(), type.typeId(), type.name())).toList(), false);
    }

    private static CardDecision release(CardFacts card, CardDemand.Release release) {
        List<Reason> reasons = new ArrayList<>();
        List<Step> steps = new ArrayList<>();
        for (PciAddress address : new TreeSet<>(release.vfs())) {
            Optional<VfFacts> vf = card.vf(address);
            if (vf.isEmpty()) {
                reasons.add(new Reason(Kind.INVALID_DEMAND, address + " is not a VF of card " + card.pf()));
            } else if (vf.get().inUse()) {
                reasons.add(new Reason(Kind.VF_IN_USE, "VF " + address + " of card " + card.pf() + " is in use;"
                        + " it can be released once nothing holds it"));
            } else if (vf.get().configured()) {
                steps.add(new Step.ClearType(address, vf.get().typeId(), card.types().name(vf.get().typeId())));
            }
        }
        return reasons.isEmpty() ? new CardPlan(card.pf(), steps, false) : new CardRefusal(card.pf(), reasons);
    }
}
