package dev.vgpu.configurator.file;

import dev.vgpu.configurator.CardDemand;
import dev.vgpu.configurator.CardFacts;
import dev.vgpu.configurator.HostFacts;
import dev.vgpu.core.PciAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One named layout of a {@link VgpuConfigFile}: its entries, in file order. {@link #demands} says what each card of a
 * host is asked to hold.
 *
 * @param name  the layout's name ({@code --select})
 * @param specs its entries, at least one
 */
public record VgpuLayout(String name, List<VgpuConfigSpec> specs) {

    /** Checks and copies. */
    public VgpuLayout {
        Objects.requireNonNull(name, "name");
        specs = List.copyOf(specs);
        if (specs.isEmpty()) {
            throw new IllegalArgumentException("layout " + name + " needs at least one entry");
        }
    }

    /**
     * Each card's demand. A card's GPU index is its place among {@code host}'s cards (the NVIDIA physical functions
     * that can host vendor-VFIO vGPUs, in PCI address order); an entry is for the cards whose index it lists (or
     * all) and whose device-vendor id passes its filter (or every card). A card no entry is for is not in the answer:
     * it is never touched. A card two entries are for is refused, naming both: which one was meant cannot be told.
     *
     * @throws InvalidVgpuConfigException when two entries are for one card
     */
    public LayoutDemands demands(HostFacts host) throws InvalidVgpuConfigException {
        Map<PciAddress, CardDemand.Layout> demands = new TreeMap<>();
        Map<PciAddress, String> sources = new TreeMap<>();
        Map<PciAddress, Integer> indexes = new LinkedHashMap<>();
        List<String> unmatched = new ArrayList<>();
        List<CardFacts> cards = host.cards();
        for (VgpuConfigSpec spec : specs) {
            boolean any = false;
            for (int index = 0; index < cards.size(); index++) {
                CardFacts card = cards.get(index);
                if (!spec.matches(index, card.deviceVendorId())) {
                    continue;
                }
                any = true;
                String earlier = sources.putIfAbsent(card.pf(), spec.path());
                if (earlier != null) {
                    throw new InvalidVgpuConfigException(spec.path(), "card " + card.pf() + " (GPU " + index + ") is"
                            + " named by " + earlier + " too; which layout it should hold cannot be told: name each"
                            + " card in one entry only");
                }
                demands.put(card.pf(), CardDemand.layout(spec.vgpuDevices()));
                indexes.put(card.pf(), index);
            }
            if (!any) {
                unmatched.add(spec.path() + " (for " + spec.describeTarget() + ") names no card of this host, which"
                        + " has " + cards.size() + (cards.size() == 1 ? " card" : " cards") + " that can host"
                        + " vendor-VFIO vGPUs" + describeCards(cards));
            }
        }
        return new LayoutDemands(name, demands, sources, indexes, unmatched);
    }

    /** {@code : GPU 0 0000:41:00.0 (0x26B910DE), ...}, or nothing for no card. */
    private static String describeCards(List<CardFacts> cards) {
        List<String> words = new ArrayList<>();
        for (int index = 0; index < cards.size(); index++) {
            words.add("GPU " + index + " " + cards.get(index).pf() + String.format(" (0x%08X)",
                    cards.get(index).deviceVendorId()));
        }
        return words.isEmpty() ? "" : ": " + String.join(", ", words);
    }
}
