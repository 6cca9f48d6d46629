package dev.vgpu.sysfs;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
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
 * union lacks is asked of the {@link VgpuTypeResolver}, at most once per PF. Confined to the scanning thread.
 */
final class CardCatalogs {

    private static final Logger LOG = LoggerFactory.getLogger(CardCatalogs.class);

    /** PF → type id → the names seen for it, whitespace runs collapsed. */
    private final Map<PciAddress, Map<Long, Set<String>>> byCard = new HashMap<>();
    /** PF → the catalogs already merged for it (by identity: equal texts share one parsed instance). */
    private final Map<PciAddress, Set<CreatableTypesCatalog>> merged = new HashMap<>();
    private final Map<PciAddress, VgpuTypeNames> resolverAnswers = new HashMap<>();
    private final VgpuTypeResolver resolver;

    CardCatalogs(VgpuTypeResolver resolver) {
        this.resolver = resolver;
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

    /** Names a type id of a card: from the card's catalog, else from the resolver, else why not. */
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
        return new Resolution(null, "neither the catalogs of card " + card
                + (types == null ? " (none lists any type)" : " (they do not list it)")
                + " nor the vGPU type resolver ("
                + answer.error().orElse("it does not list it among the card's types") + ") name type " + typeId);
    }

    private VgpuTypeNames ask(PciAddress card) {
        try {
            VgpuTypeNames answer = resolver.supportedTypes(card);
            return answer != null ? answer : VgpuTypeNames.failed("the resolver returned nothing");
        } catch (RuntimeException e) {
            LOG.warn("vGPU type resolver failed for card {}: {}", card, e.toString());
            return VgpuTypeNames.failed("the resolver failed: " + e);
        }
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
