package dev.vgpu.configurator.file;

import dev.vgpu.configurator.CardDemand;
import dev.vgpu.core.PciAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What a named layout asks of one host: each card's demand (for {@link dev.vgpu.configurator.Applier#apply}), where in
 * the file it comes from and the card's GPU index (for messages), and the entries that named no card.
 *
 * @param layout    the layout's name
 * @param cards     card → the layout it is to hold, in address order; cards not here are never touched
 * @param sources   card → the entry it comes from ({@code vgpu-configs.default[0]})
 * @param indexes   card → its GPU index
 * @param unmatched one sentence per entry that names no card of the host (a file written for other nodes)
 */
public record LayoutDemands(String layout, Map<PciAddress, CardDemand.Layout> cards, Map<PciAddress, String> sources,
                            Map<PciAddress, Integer> indexes, List<String> unmatched) {

    /** Checks and copies. */
    public LayoutDemands {
        Objects.requireNonNull(layout, "layout");
        cards = Collections.unmodifiableMap(new TreeMap<>(cards));
        sources = Map.copyOf(sources);
        indexes = Map.copyOf(indexes);
        unmatched = List.copyOf(unmatched);
        if (!sources.keySet().equals(cards.keySet()) || !indexes.keySet().equals(cards.keySet())) {
            throw new IllegalArgumentException("every card needs a source and an index, and only those");
        }
    }

    /** The demands as the applier takes them. */
    public Map<PciAddress, CardDemand> demands() {
        return Collections.unmodifiableMap(new TreeMap<PciAddress, CardDemand>(cards));
    }

    /** The card in words for messages: {@code GPU 0 (0000:41:00.0, vgpu-configs.default[0])}. */
    public Optional<String> describeCard(PciAddress card) {
        if (!cards.containsKey(card)) {
            return Optional.empty();
        }
        return Optional.of("GPU " + indexes.get(card) + " (" + card + ", " + sources.get(card) + ")");
    }

    /** One line per card: {@code GPU 0 0000:41:00.0: 4 × "L40S-12Q" (vgpu-configs.default[0])}. */
    public List<String> describe() {
        List<String> lines = new ArrayList<>();
        cards.forEach((card, demand) -> lines.add("GPU " + indexes.get(card) + " " + card + ": " + demand.describe()
                + " (" + sources.get(card) + ")"));
        return lines;
    }
}
