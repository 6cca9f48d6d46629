package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeResolver;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Every card of a host that can host vendor-VFIO vGPUs, in PCI address order. That order is the one
 * vgpu-device-manager's {@code devices: [<index>...]} counts in: index 0 is the card with the lowest address.
 *
 * @param cards the cards, sorted by PF address; an address may appear once
 */
public record HostFacts(List<CardFacts> cards) {

    /** Sorts and copies; two cards with one address are refused. */
    public HostFacts {
        List<CardFacts> sorted = new ArrayList<>(cards);
        sorted.sort(Comparator.comparing(CardFacts::pf));
        for (int i = 1; i < sorted.size(); i++) {
            if (sorted.get(i).pf().equals(sorted.get(i - 1).pf())) {
                throw new IllegalArgumentException("card " + sorted.get(i).pf() + " is listed twice");
            }
        }
        cards = List.copyOf(sorted);
    }

    /** The card with this PF address, if the host has it. */
    public Optional<CardFacts> card(PciAddress pf) {
        return cards.stream().filter(card -> card.pf().equals(pf)).findFirst();
    }

    /**
     * What these facts name, as a resolver: a card's {@link CardTypes#names() names} for that card, nothing for
     * another. A scan after the configurator filled a card (whose catalogs then list nothing) can name its VFs
     * with it.
     */
    public VgpuTypeResolver typeNames() {
        return KnownTypeNames.of(types());
    }

    /** The types of every card, by PF address. */
    public Map<PciAddress, CardTypes> types() {
        return cards.stream().collect(Collectors.toUnmodifiableMap(CardFacts::pf, CardFacts::types));
    }
}
