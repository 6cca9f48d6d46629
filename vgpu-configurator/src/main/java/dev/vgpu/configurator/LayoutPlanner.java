package dev.vgpu.configurator;

import dev.vgpu.configurator.CardRefusal.Kind;
import dev.vgpu.configurator.CardRefusal.Reason;
import dev.vgpu.core.PciAddress;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;

/**
 * Plans a whole {@link CardDemand.Layout} for one card (see {@link Planner}). Stateless.
 */
final class LayoutPlanner {

    private LayoutPlanner() {
    }

    static CardDecision plan(CardFacts card, CardDemand.Layout layout) {
        List<Reason> reasons = new ArrayList<>();
        boolean noVfs = card.vfs().isEmpty();
        Map<Long, Integer> wanted = new TreeMap<>();
        Map<Long, Profiles.Resolved> resolved = new TreeMap<>();
        List<String> sized = new ArrayList<>();
        layout.counts().forEach((profile, count) -> {
            Profiles.Resolved type = Profiles.resolve(card, profile, noVfs, reasons);
            if (type == null) {
                if (noVfs && count > 0) {
                    sized.add(profile);
                }
                return;
            }
            Profiles.Resolved twice = resolved.putIfAbsent(type.typeId(), type);
            if (twice != null) {
                reasons.add(new Reason(Kind.INVALID_DEMAND, "the layout of card " + card.pf() + " names "
                        + ProfileNames.quoted(type.name()) + " twice, as " + ProfileNames.quoted(twice.asked())
                        + " and " + ProfileNames.quoted(profile)));
                return;
            }
            wanted.put(type.typeId(), count);
            if (count > 0) {
                sized.add(type.name());
            }
        });
        OptionalInt size = Profiles.commonSize(card, sized, reasons);
        int total = layout.total();
        if (noVfs && total == 0) {
            return reasons.isEmpty() ? CardPlan.nothing(card.pf()) : new CardRefusal(card.pf(), reasons);
        }
        if (noVfs) {
            if (card.totalVfs() == 0) {
                reasons.add(new Reason(Kind.NO_VFS, "card " + card.pf() + " has no VFs and can have none"
                        + " (sriov_totalvfs is 0): it is not in SR-IOV vGPU mode"));
            } else if (total > card.totalVfs()) {
                reasons.add(new Reason(Kind.OVER_CAPACITY, "the layout asks card " + card.pf() + " for " + total
                        + " vGPUs, and it can have at most " + Profiles.vfs(card.totalVfs())));
            }
        } else {
            checkInUse(card, wanted, resolved, total, reasons);
        }
        if (size.isPresent()) {
            Profiles.checkFramebuffer(card, (long) size.getAsInt() * total, "the layout of card " + card.pf(),
                    reasons);
        }
        if (!reasons.isEmpty()) {
            return new CardRefusal(card.pf(), reasons);
        }
        if (noVfs) {
            return new CardPlan(card.pf(), List.of(new Step.EnableVfs(card.pf(), card.totalVfs())), true);
        }
        return new CardPlan(card.pf(), steps(card, wanted, resolved), false);
    }

    /** Refuses a layout that would need a VF in use: clearing one, or more VFs than the others. */
    private static void checkInUse(CardFacts card, Map<Long, Integer> wanted, Map<Long, Profiles.Resolved> resolved,
                                   int total, List<Reason> reasons) {
        Map<Long, List<PciAddress>> usedHolders = new TreeMap<>();
        List<PciAddress> usedFree = new ArrayList<>();
        for (VfFacts vf : card.vfs()) {
            if (vf.inUse() && vf.configured()) {
                usedHolders.computeIfAbsent(vf.typeId(), id -> new ArrayList<>()).add(vf.address());
            } else if (vf.inUse()) {
                usedFree.add(vf.address());
            }
        }
        int keptInUse = 0;
        for (Map.Entry<Long, List<PciAddress>> held : usedHolders.entrySet()) {
            int keep = wanted.getOrDefault(held.getKey(), 0);
            List<PciAddress> vfs = held.getValue();
            if (keep == 0) {
                reasons.add(new Reason(Kind.VF_IN_USE, "card " + card.pf() + ": " + in(vfs) + " in use and hold"
                        + (vfs.size() == 1 ? "s " : " ") + card.types().describe(held.getKey())
                        + ", which the layout does not keep; the card is left alone while they are in use"));
            } else if (vfs.size() > keep) {
                reasons.add(new Reason(Kind.VF_IN_USE, "card " + card.pf() + ": " + in(vfs) + " in use and hold "
                        + ProfileNames.quoted(resolved.get(held.getKey()).name()) + ", and the layout keeps only "
                        + keep + "; the card is left alone while they are in use"));
            }
            keptInUse += Math.min(keep, vfs.size());
        }
        long notInUse = card.vfs().stream().filter(vf -> !vf.inUse()).count();
        if (total <= notInUse + keptInUse) {
            return;
        }
        if (total > card.vfs().size()) {
            reasons.add(new Reason(Kind.OVER_CAPACITY, "the layout asks card " + card.pf() + " for " + total
                    + " vGPUs, and it has " + Profiles.vfs(card.vfs().size())
                    + (card.vfs().size() < card.totalVfs() ? " enabled (it could have " + card.totalVfs()
                            + ": with no vGPU on it, disable its VFs and the configurator enables them all)" : "")));
        } else {
            List<PciAddress> used = new ArrayList<>(usedFree);
            usedHolders.values().forEach(used::addAll);
            used.sort(Comparator.naturalOrder());
            reasons.add(new Reason(Kind.VF_IN_USE, "the layout asks card " + card.pf() + " for " + total
                    + " vGPUs; it has " + Profiles.vfs(card.vfs().size()) + ", and " + in(used)
                    + " in use; the card is left alone while they are"));
        }
    }

    private static String in(List<PciAddress> vfs) {
        return (vfs.size() == 1 ? "VF " : "VFs ") + String.join(", ", vfs.stream().map(PciAddress::toString).toList())
                + (vfs.size() == 1 ? " is" : " are");
    }

    /** Keeps VFs holding a wanted type (those in use first), clears the rest, fills the gaps lowest first. */
    private static List<Step> steps(CardFacts card, Map<Long, Integer> wanted,
                                    Map<Long, Profiles.Resolved> resolved) {
        Set<PciAddress> kept = new HashSet<>();
        Map<Long, Integer> missing = new TreeMap<>();
        wanted.forEach((id, count) -> {
            List<VfFacts> holders = new ArrayList<>(card.vfs().stream().filter(vf -> vf.typeId() == id).toList());
            holders.sort(Comparator.comparing((VfFacts vf) -> !vf.inUse()).thenComparing(VfFacts::address));
            holders.stream().limit(count).forEach(vf -> kept.add(vf.address()));
            missing.put(id, count - Math.min(count, holders.size()));
        });
        List<Step> clears = new ArrayList<>();
        List<Step> sets = new ArrayList<>();
        List<VfFacts> candidates = new ArrayList<>();
        for (VfFacts vf : card.vfs()) {
            if (kept.contains(vf.address()) || vf.inUse()) {
                continue;
            }
            if (vf.configured()) {
                clears.add(new Step.ClearType(vf.address(), vf.typeId(), card.types().name(vf.typeId())));
            }
            candidates.add(vf);
        }
        Iterator<VfFacts> next = candidates.iterator();
        missing.forEach((id, count) -> {
            for (int i = 0; i < count; i++) {
                VfFacts vf = next.next();
                sets.add(new Step.SetType(vf.address(), id, resolved.get(id).name()));
            }
        });
        sets.sort(Comparator.comparing(step -> ((Step.SetType) step).vf()));
        List<Step> steps = new ArrayList<>(clears);
        steps.addAll(sets);
        return steps;
    }
}
