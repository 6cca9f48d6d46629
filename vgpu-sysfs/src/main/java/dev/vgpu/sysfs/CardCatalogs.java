package dev.vgpu.sysfs;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The vGPU type names of each card during one scan. Type ids are card-local, so everything is keyed by the
 * physical function: a card's catalog is the union of the {@code creatable_vgpu_types} of its PF and of every
 * VF whose {@code physfn} is that PF; an id that the union names twice (differently) is ambiguous. What the
 * union lacks is asked of the {@link VgpuTypeResolver}, at most once per PF, and what that cannot name either
 * is recalled from the source's {@link TypeNameMemory} of that card. Every name a catalog or the resolver gives
 * is remembered there. Confined to the scanning thread.
 */
final class CardCatalogs {

    private static final Logger LOG = LoggerFactory.getLogger(CardCatalogs.class);

    /** PF → type id → the names seen for it, whitespace runs collapsed. */
    private final Map<PciAddress, Map<Long, Set<String>>> byCard = new HashMap<>();
    /** PF → the catalogs already merged for it (by identity: equal texts share one parsed instance). */
    private final Map<PciAddress, Set<CreatableTypesCatalog>> merged = new HashMap<>();
    private final Map<PciAddress, VgpuTypeNames> resolverAnswers = new HashMap<>();
    private final VgpuTypeResolver resolver;
    private final TypeNameMemory memory;
    private final Path root;

    CardCatalogs(VgpuTypeResolver resolver, TypeNameMemory memory, Path root) {
        this.resolver = resolver;
        this.memory = memory;
        this.root = root;
    }

    /** The outcome of naming one type: a profile name, or why there is none. */
    record Resolution(String name, String problem) {
    }

    /** Adds one file's rows to a card's catalog. */
    void merge(PciAddress card, CreatableTypesCatalog catalog) {
        if (catalog.isEmpty() || !merged.computeIfAbsent(card, c -> Collections.newSetFromMap(new IdentityHashMap<>())).add(catalog)) {
            return;
        }
        Map<Long, Set<String>> types = byCard.computeIfAbsent(card, c -> new HashMap<>());
        for (CreatableTypesCatalog.Entry entry : catalog.entries()) {
            types.computeIfAbsent(entry.typeId(), id -> new TreeSet<>()).add(collapseWhitespace(entry.name()));
        }
    }

    /**
     * Remembers every type the card catalogs of this scan name unambiguously, so that they still name those types
     * once the card is full; then forgets the cards this scan did not see.
     *
     * @param cards every card (PF) this scan saw
     */
    void remember(Set<PciAddress> cards) {
        byCard.forEach((card, types) -> types.forEach((typeId, names) -> {
            if (names.size() == 1) {
                memory.learn(root, card, typeId, names.iterator().next(), "its creatable_vgpu_types");
            }
        }));
        memory.keepOnly(root, cards);
    }

    /**
     * Names a type id of a card: from the card's catalog, else from the resolver, else from what was learned
     * about that card earlier, else why not.
     */
    Resolution resolve(PciAddress card, long typeId) {
        Map<Long, Set<String>> types = byCard.get(card);
        Set<String> names = types == null ? null : types.get(typeId);
        if (names != null && names.size() == 1) {
            return new Resolution(names.iterator().next(), null);
        }
        if (names != null) {
            return new Resolution(null, "the catalogs of card " + card + " give type " + typeId
                    + " two different names, \"" + String.join("\" and \"", names) + "\", so it is ambiguous");
        }
        VgpuTypeNames answer = resolverAnswers.computeIfAbsent(card, this::ask);
        String name = answer.name(typeId).map(CardCatalogs::collapseWhitespace).orElse("");
        if (!name.isEmpty()) {
            return new Resolution(name, null);
        }
        var remembered = memory.recall(root, card, typeId);
        if (remembered.isPresent()) {
            if (!remembered.get().announced()) {
                LOG.info("vendor-vfio: card {}: naming vGPU type {} \"{}\" as learned earlier from {}: neither the"
                        + " card's catalogs ({}) nor the vGPU type resolver ({}) name it now", card, typeId,
                        remembered.get().name(), remembered.get().from(),
                        types == null ? "none lists any type, as on a full card" : "they do not list it",
                        answer.error().orElse("it does not list it"));
            }
            return new Resolution(remembered.get().name(), null);
        }
        return new Resolution(null, "neither the catalogs of card " + card
                + (types == null ? " (none lists any type)" : " (they do not list it)")
                + " nor the vGPU type resolver ("
                + (answer.failed() ? "it failed: " + answer.error().orElseThrow() + "; retried at the next scan"
                        : answer.error().orElse("it does not list it among the card's types"))
                + ") name type " + typeId + ", and no name was learned for it on this card earlier");
    }

    private VgpuTypeNames ask(PciAddress card) {
        VgpuTypeNames answer;
        try {
            answer = resolver.supportedTypes(card);
            if (answer == null) {
                answer = VgpuTypeNames.failed("the resolver returned nothing");
            }
        } catch (RuntimeException e) {
            LOG.warn("vGPU type resolver failed for card {}: {}", card, e.toString());
            answer = VgpuTypeNames.failed("the resolver failed: " + e);
        }
        answer.names().forEach((typeId, name) -> {
            String collapsed = collapseWhitespace(name);
            if (!collapsed.isEmpty()) {
                memory.learn(root, card, typeId, collapsed, "the vGPU type resolver");
            }
        });
        return answer;
    }

    /** Strips and turns every whitespace run into one space, so padding differences are not conflicts. */
    static String collapseWhitespace(String name) {
        String text = name.strip();
        StringBuilder out = new StringBuilder(text.length());
        boolean previousSpace = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean space = Character.isWhitespace(c);
            if (!space) {
                out.append(c);
            } else if (!previousSpace) {
                out.append(' ');
            }
            previousSpace = space;
        }
        return out.toString();
    }
}
