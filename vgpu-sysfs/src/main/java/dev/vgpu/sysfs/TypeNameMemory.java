package dev.vgpu.sysfs;

import dev.vgpu.core.PciAddress;
import java.nio.file.FileSystem;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The vGPU profile names a source has learned during this process's life, per host root and card: (physical
 * function, type id) → profile name, from the card's own catalogs or from the vGPU type resolver (NVML).
 *
 * <p>Why: when a card fills up every catalog of it shrinks to its header, and NVML may be absent or fail for one
 * scan; the names learned earlier still name those types on that card. Type ids are card-local, so a name is only
 * ever recalled for the card it was learned on; a newer answer (a catalog naming the type differently) replaces
 * it, and a card's names are forgotten as soon as a scan no longer sees the card.
 *
 * <p>Thread-safe (every method is synchronized); a source keeps one instance for its whole life.
 */
final class TypeNameMemory {

    /** Roots remembered at most; a source is normally scanned on one root only. */
    private static final int MAX_ROOTS = 16;

    /**
     * One remembered name.
     *
     * @param name      the profile name
     * @param from      where it was learned, for the log line that says a remembered name was used
     * @param announced whether that log line was written since the name was last learned
     */
    record Learned(String name, String from, boolean announced) {
    }

    /** A root on one file system: equal paths on two file systems (jimfs in tests) are different hosts. */
    private record Root(FileSystem fileSystem, Path path) {
        static Root of(Path root) {
            return new Root(root.getFileSystem(), root.toAbsolutePath().normalize());
        }
    }

    private final Map<Root, Map<PciAddress, Map<Long, Learned>>> byRoot =
            new LinkedHashMap<>(4, 0.75f, true) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<Root, Map<PciAddress, Map<Long, Learned>>> eldest) {
                    return size() > MAX_ROOTS;
                }
            };

    /** Remembers (or replaces) the name of one type of one card. */
    synchronized void learn(Path root, PciAddress card, long typeId, String name, String from) {
        byRoot.computeIfAbsent(Root.of(root), r -> new HashMap<>()).computeIfAbsent(card, c -> new HashMap<>())
                .put(typeId, new Learned(name, from, false));
    }

    /**
     * The name learned earlier for this type on this card (never another card's). The first recall after a name
     * was learned answers {@code announced == false}, later ones {@code true}, so the caller logs once.
     */
    synchronized Optional<Learned> recall(Path root, PciAddress card, long typeId) {
        Map<PciAddress, Map<Long, Learned>> cards = byRoot.get(Root.of(root));
        Map<Long, Learned> types = cards == null ? null : cards.get(card);
        Learned learned = types == null ? null : types.get(typeId);
        if (learned != null && !learned.announced()) {
            types.put(typeId, new Learned(learned.name(), learned.from(), true));
        }
        return Optional.ofNullable(learned);
    }

    /** Forgets every card of {@code root} that is not in {@code present} (the cards one whole scan saw). */
    synchronized void keepOnly(Path root, Set<PciAddress> present) {
        Map<PciAddress, Map<Long, Learned>> cards = byRoot.get(Root.of(root));
        if (cards != null) {
            cards.keySet().retainAll(present);
        }
    }
}
