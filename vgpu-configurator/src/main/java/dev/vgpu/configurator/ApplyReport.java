package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeResolver;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * What one {@link Applier#apply} did: an outcome per card asked for, in address order, and the type names it read.
 *
 * @param cards the outcomes, sorted by card
 * @param types each card's type names, as every read of it during the run showed them
 */
public record ApplyReport(List<CardOutcome> cards, Map<PciAddress, CardTypes> types) {

    /** Sorts and copies. */
    public ApplyReport {
        List<CardOutcome> sorted = new ArrayList<>(cards);
        sorted.sort(Comparator.comparing(CardOutcome::card));
        cards = List.copyOf(sorted);
        types = Map.copyOf(types);
    }

    /** True when every card holds what was asked ({@code configure} exits 0). */
    public boolean hostMatches() {
        return cards.stream().allMatch(CardOutcome::matches);
    }

    /** Every write made, on every card. */
    public int writes() {
        return cards.stream().mapToInt(CardOutcome::writes).sum();
    }

    /**
     * The names read, as a resolver: once the configurator filled a card its catalogs list nothing, and a scan
     * names that card's VFs with these (put it before or beside NVML, {@link KnownTypeNames#union}).
     */
    public VgpuTypeResolver typeNames() {
        return KnownTypeNames.of(types);
    }
}
