package dev.vgpu.sysfs;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.StateDirectory;
import java.io.IOException;
import java.nio.file.FileSystem;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The vGPU profile names a source has learned, per host root and card: (card, type id) → profile name, from the
 * card's own catalogs or from the vGPU type resolver (NVML); with a {@link StateDirectory}, also those learned
 * before a restart ({@link LearnedNamesFile}).
 *
 * <p>Why: when a card fills up every catalog of it shrinks to its header, and NVML may be absent or fail for one
 * scan; the names learned earlier still name those types on that card. Type ids are card-local and may change with
 * the driver, so a name is only ever recalled for the {@link Card card} it was learned on: the same PF address, PCI
 * device id and NVIDIA driver version. A newer answer (a catalog naming the type differently) replaces it, and a
 * card's names are forgotten as soon as a whole scan no longer sees that card (moved, removed, another card in the
 * slot, another driver).
 *
 * <p>Persisting: {@link #readState} loads the state file of a root once, before its first scan recalls anything;
 * {@link #writeState} writes the root's names after a scan, only when they differ from what the file holds. A bad
 * file is one WARN and is ignored (and replaced at the next change); a failed write is one WARN and is tried again
 * at the next change, not at every scan.
 *
 * <p>Thread-safe: every method is synchronized, and this object owns every map in it; the file is read and written
 * under that lock too (a daemon scans on one thread, so nothing waits on it). A source keeps one instance for its
 * whole life.
 */
final class TypeNameMemory {

    private static final Logger LOG = LoggerFactory.getLogger(TypeNameMemory.class);
    /** Roots remembered at most; a source is normally scanned on one root only. */
    private static final int MAX_ROOTS = 16;

    /**
     * What makes a card the same card for its type ids.
     *
     * @param pf            the physical function's address
     * @param deviceId      its PCI device id, four lowercase hex digits ({@code 2335})
     * @param driverVersion the NVIDIA driver version ({@code 550.54.14}), or {@code unknown} when the host has none
     */
    record Card(PciAddress pf, String deviceId, String driverVersion) implements Comparable<Card> {
        /** The version of a host whose {@code sys/module/nvidia/version} is absent; it matches only itself. */
        static final String UNKNOWN_DRIVER = "unknown";

        Card {
            if (!isDeviceId(deviceId)) {
                throw new IllegalArgumentException("not a device id: " + SysfsFiles.printable(deviceId));
            }
            if (!isDriverVersion(driverVersion)) {
                throw new IllegalArgumentException("not a driver version: " + SysfsFiles.printable(driverVersion));
            }
        }

        static boolean isDeviceId(String text) {
            if (text.length() != 4) {
                return false;
            }
            for (int i = 0; i < 4; i++) {
                char c = text.charAt(i);
                if (!(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'f')) {
                    return false;
                }
            }
            return true;
        }

        /** 1 to 63 printable ASCII characters without space, {@code /} or {@code ,}. */
        static boolean isDriverVersion(String text) {
            return SysfsFiles.isToken(text);
        }

        @Override
        public int compareTo(Card other) {
            int byPf = pf.compareTo(other.pf);
            if (byPf != 0) {
                return byPf;
            }
            int byDevice = deviceId.compareTo(other.deviceId);
            return byDevice != 0 ? byDevice : driverVersion.compareTo(other.driverVersion);
        }

        @Override
        public String toString() {
            return pf + " (device " + deviceId + ", driver " + driverVersion + ")";
        }
    }

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

    /** What is known of one root. */
    private static final class Known {
        final Map<Card, Map<Long, Learned>> cards = new HashMap<>();
        /** The state directory read for this root; null while none was. */
        Path stateDirectory;
        /** The names the state file holds as far as this process knows (read, or last written or tried). */
        Map<Card, Map<Long, String>> stored = Map.of();
    }

    private final Map<Root, Known> byRoot = new LinkedHashMap<>(4, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Root, Known> eldest) {
            return size() > MAX_ROOTS;
        }
    };

    private Known known(Path root) {
        return byRoot.computeIfAbsent(Root.of(root), r -> new Known());
    }

    /** Remembers (or replaces) the name of one type of one card. */
    synchronized void learn(Path root, Card card, long typeId, String name, String from) {
        known(root).cards.computeIfAbsent(card, c -> new HashMap<>()).put(typeId, new Learned(name, from, false));
    }

    /**
     * The name learned earlier for this type on this card (never another card's). The first recall after a name
     * was learned answers {@code announced == false}, later ones {@code true}, so the caller logs once.
     */
    synchronized Optional<Learned> recall(Path root, Card card, long typeId) {
        Known known = byRoot.get(Root.of(root));
        Map<Long, Learned> types = known == null ? null : known.cards.get(card);
        Learned learned = types == null ? null : types.get(typeId);
        if (learned != null && !learned.announced()) {
            types.put(typeId, new Learned(learned.name(), learned.from(), true));
        }
        return Optional.ofNullable(learned);
    }

    /**
     * Forgets every card of {@code root} that one whole scan did not see: not in {@code present}, and not at an
     * address in {@code unidentified} (cards the scan saw without being able to tell which card they are: kept as
     * they were, neither used nor forgotten).
     */
    synchronized void keepOnly(Path root, Set<Card> present, Set<PciAddress> unidentified) {
        Known known = byRoot.get(Root.of(root));
        if (known != null) {
            known.cards.keySet().removeIf(card -> !present.contains(card) && !unidentified.contains(card.pf()));
        }
    }

    /**
     * Reads the state file in {@code directory} for {@code root}, once per root and directory: its names join the
     * memory for the cards it does not know yet. Never throws; a bad file is one WARN.
     */
    synchronized void readState(Path root, StateDirectory directory) {
        Known known = known(root);
        if (directory.path().equals(known.stateDirectory)) {
            return;
        }
        known.stateDirectory = directory.path();
        Path file = directory.path().resolve(LearnedNamesFile.FILE);
        LearnedNamesFile.Contents contents = LearnedNamesFile.read(directory.path());
        if (contents.problem().isPresent()) {
            LOG.warn("vendor-vfio: ignoring the state file {}: {}; profile names learned before this start are not"
                    + " used{}", file, contents.problem().get(), directory.mayWrite()
                    ? ", and the file is replaced once names are learned" : "");
            known.stored = Map.of();
            return;
        }
        known.stored = contents.names();
        if (contents.names().isEmpty()) {
            LOG.debug("vendor-vfio: no profile names in {} yet", file);
            return;
        }
        String from = "the state file " + file + " (before this start)";
        contents.names().forEach((card, types) -> {
            if (!known.cards.containsKey(card)) {
                Map<Long, Learned> learned = new HashMap<>();
                types.forEach((typeId, name) -> learned.put(typeId, new Learned(name, from, false)));
                known.cards.put(card, learned);
            }
        });
        int cards = contents.names().size();
        LOG.info("vendor-vfio: read {} profile names of {} card{} from {}; each is used only for the same card, device"
                + " id and driver version", contents.names().values().stream().mapToInt(Map::size).sum(), cards,
                cards == 1 ? "" : "s", file);
    }

    /**
     * Writes the names of {@code root} to the state file in {@code directory} when they differ from what it holds
     * and the directory may be written. Never throws; a failure is one WARN.
     */
    synchronized void writeState(Path root, StateDirectory directory) {
        Known known = byRoot.get(Root.of(root));
        if (known == null || !directory.mayWrite()) {
            return;
        }
        Map<Card, Map<Long, String>> names = storable(known);
        if (names.equals(known.stored)) {
            return;
        }
        known.stored = names;
        Path file = directory.path().resolve(LearnedNamesFile.FILE);
        try {
            LearnedNamesFile.write(directory.path(), names);
            LOG.debug("vendor-vfio: wrote {} cards' profile names to {}", names.size(), file);
        } catch (IOException e) {
            LOG.warn("vendor-vfio: cannot write the learned profile names to {}: {}; a restart without NVML may not"
                    + " name the types of full cards (tried again when the names change)", file,
                    LearnedNamesFile.describe(e));
        }
    }

    /** The names a state file can hold: storable ones, the first {@value LearnedNamesFile#MAX_ENTRIES} in order. */
    private static Map<Card, Map<Long, String>> storable(Known known) {
        Map<Card, Map<Long, String>> names = new TreeMap<>();
        int count = 0;
        for (Map.Entry<Card, Map<Long, Learned>> card : new TreeMap<>(known.cards).entrySet()) {
            for (Map.Entry<Long, Learned> type : new TreeMap<>(card.getValue()).entrySet()) {
                if (count < LearnedNamesFile.MAX_ENTRIES && LearnedNamesFile.storable(type.getValue().name())) {
                    names.computeIfAbsent(card.getKey(), c -> new TreeMap<>()).put(type.getKey(),
                            type.getValue().name());
                    count++;
                }
            }
        }
        return names;
    }
}
