package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeResolver;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one {@link Applier#apply} did: an outcome per card asked for, in address order, the type names it read and
 * what each card holds at the end. Made for metrics as well as for words: {@link #results()} counts outcomes by
 * {@link CardOutcome#result()} ({@code vgpu_config_apply_total{result}}), {@link #vgpusByProfile()} counts the VFs
 * holding each profile.
 *
 * @param cards the outcomes, sorted by card
 * @param types each card's type names, as every read of it during the run showed them
 * @param vgpus each card's vGPUs as the last read of the run showed them (after a rollback, too): profile → VFs
 *              holding it (a type nothing names is {@code type <id>}); a card that could not be read is not here
 */
public record ApplyReport(List<CardOutcome> cards, Map<PciAddress, CardTypes> types,
                          Map<PciAddress, Map<String, Integer>> vgpus) {

    /** Sorts and copies. */
    public ApplyReport {
        List<CardOutcome> sorted = new ArrayList<>(cards);
        sorted.sort(Comparator.comparing(CardOutcome::card));
        cards = List.copyOf(sorted);
        types = Map.copyOf(types);
        Map<PciAddress, Map<String, Integer>> copy = new TreeMap<>();
        vgpus.forEach((card, counts) -> copy.put(card, Collections.unmodifiableMap(new TreeMap<>(counts))));
        vgpus = Collections.unmodifiableMap(copy);
    }

    /** A report without the cards' end state. */
    public ApplyReport(List<CardOutcome> cards, Map<PciAddress, CardTypes> types) {
        this(cards, types, Map.of());
    }

    /** True when every card holds what was asked ({@code configure} exits 0). */
    public boolean hostMatches() {
        return cards.stream().allMatch(CardOutcome::matches);
    }

    /** Every write made, on every card. */
    public int writes() {
        return cards.stream().mapToInt(CardOutcome::writes).sum();
    }

    /** How many cards had each outcome, by {@link CardOutcome#result()} ({@code applied}, {@code refused}, ...). */
    public Map<String, Integer> results() {
        Map<String, Integer> counts = new TreeMap<>();
        cards.forEach(outcome -> counts.merge(outcome.result(), 1, Integer::sum));
        return Collections.unmodifiableMap(counts);
    }

    /** How many VFs of all cards read hold each profile at the end, by profile name. */
    public Map<String, Integer> vgpusByProfile() {
        Map<String, Integer> counts = new TreeMap<>();
        vgpus.values().forEach(card -> card.forEach((profile, count) -> counts.merge(profile, count, Integer::sum)));
        return Collections.unmodifiableMap(counts);
    }

    /**
     * The names read, as a resolver: once the configurator filled a card its catalogs list nothing, and a scan
     * names that card's VFs with these (put it before or beside NVML, {@link KnownTypeNames#union}).
     */
    public VgpuTypeResolver typeNames() {
        return KnownTypeNames.of(types);
    }

    /** A card's vGPUs by profile name; a type nothing names is {@code type <id>}. */
    static Map<String, Integer> byProfile(CardFacts card) {
        Map<String, Integer> counts = new HashMap<>();
        card.vgpuCounts().forEach((id, count) -> counts.merge(card.types().name(id).orElse("type " + id), count,
                Integer::sum));
        return counts;
    }
}
