package dev.vgpu.sysfs;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.sysfs.internal.CreatableTypesCatalog;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;
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
 * is remembered there. The memory knows a card by its PF address, PCI device id and NVIDIA driver version
 * ({@link TypeNameMemory.Card}), read once per card and scan; a card whose device id or driver version cannot be
 * read in a scan is neither named from memory nor forgotten by it in that scan. Confined to the scanning thread.
 */
final class CardCatalogs {

    private static final Logger LOG = LoggerFactory.getLogger(CardCatalogs.class);
    /** The NVIDIA kernel module's sysfs directory; its {@code version} file is the driver version. */
    static final String DRIVER_MODULE = "sys/module/nvidia";

    /** PF → type id → the names seen for it, whitespace runs collapsed. */
    private final Map<PciAddress, Map<Long, Set<String>>> byCard = new HashMap<>();
    /** PF → the catalogs already merged for it (by identity: equal texts share one parsed instance). */
    private final Map<PciAddress, Set<CreatableTypesCatalog>> merged = new HashMap<>();
    private final Map<PciAddress, VgpuTypeNames> resolverAnswers = new HashMap<>();
    /** PF → which card it is for the memory, read once per scan. */
    private final Map<PciAddress, Identity> identities = new HashMap<>();
    private final VgpuTypeResolver resolver;
    private final TypeNameMemory memory;
    private final Host host;
    private final Path root;
    /** The driver version of this scan (empty when it cannot be read); read when a card is first identified. */
    private String driverVersion;
    /** Why the driver version cannot be read; null when it can. */
    private String driverProblem;

    CardCatalogs(Host host, TypeNameMemory memory) {
        this.resolver = host.vgpuTypes();
        this.memory = memory;
        this.host = host;
        this.root = host.root();
    }

    /** The outcome of naming one type: a profile name, or why there is none. */
    sealed interface Resolution permits Resolution.Named, Resolution.Unnamed {

        /** The type's profile name, whitespace runs collapsed. */
        record Named(String name) implements Resolution {
        }

        /** Why the type has no name, a clause for a skip reason. */
        record Unnamed(String problem) implements Resolution {
        }
    }

    /** Which card a PF is, or why that cannot be told in this scan. */
    private sealed interface Identity permits Identified, Unidentified {
        /** The card; empty when it cannot be told. */
        default Optional<TypeNameMemory.Card> card() {
            return this instanceof Identified identified ? Optional.of(identified.known()) : Optional.empty();
        }
    }

    private record Identified(TypeNameMemory.Card known) implements Identity {
    }

    private record Unidentified(String problem) implements Identity {
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
        byCard.forEach((card, types) -> identify(card).card().ifPresent(identified ->
                types.forEach((typeId, names) -> {
                    if (names.size() == 1) {
                        memory.learn(root, identified, typeId, names.iterator().next(), "its creatable_vgpu_types");
                    }
                })));
        Set<TypeNameMemory.Card> present = new HashSet<>();
        Set<PciAddress> unidentified = new HashSet<>();
        for (PciAddress card : cards) {
            Optional<TypeNameMemory.Card> identified = identify(card).card();
            if (identified.isPresent()) {
                present.add(identified.get());
            } else {
                unidentified.add(card);
            }
        }
        memory.keepOnly(root, present, unidentified);
    }

    /** Which card a PF is: its address, its {@code device} id and the driver version of this scan. */
    private Identity identify(PciAddress pf) {
        Identity known = identities.get(pf);
        if (known != null) {
            return known;
        }
        if (driverVersion == null) {
            readDriverVersion();
        }
        Identity identity;
        if (driverProblem != null) {
            identity = new Unidentified(driverProblem);
        } else {
            try {
                String device = SysfsFiles.hexId(host, host.path(PciBus.PCI_DEVICES).resolve(pf.toString()),
                        "device");
                identity = new Identified(new TypeNameMemory.Card(pf, device, driverVersion));
            } catch (IOException e) {
                identity = new Unidentified("the device id of card " + pf + " cannot be read ("
                        + SysfsFiles.describe(e) + ")");
            }
        }
        identities.put(pf, identity);
        return identity;
    }

    /**
     * Reads the NVIDIA driver version, {@code sys/module/nvidia/version}: {@code unknown} when the file is absent;
     * a problem (and an empty version) when it cannot be read or holds no version.
     */
    private void readDriverVersion() {
        String problem = null;
        String version;
        try {
            version = SysfsFiles.readStripped(host, host.path(DRIVER_MODULE), "version");
            if (!TypeNameMemory.Card.isDriverVersion(version)) {
                problem = "the driver version (" + DRIVER_MODULE + "/version) is not a version: \""
                        + SysfsFiles.printable(version) + "\"";
            }
        } catch (NoSuchFileException e) {
            version = TypeNameMemory.Card.UNKNOWN_DRIVER;
        } catch (IOException e) {
            version = "";
            problem = "the driver version (" + DRIVER_MODULE + "/version) cannot be read (" + SysfsFiles.describe(e)
                    + ")";
        }
        driverVersion = problem == null ? version : "";
        driverProblem = problem;
    }

    /**
     * Names a type id of a card: from the card's catalog, else from the resolver, else from what was learned
     * about that card earlier, else why not.
     */
    Resolution resolve(PciAddress card, long typeId) {
        Map<Long, Set<String>> types = byCard.get(card);
        Set<String> names = types == null ? null : types.get(typeId);
        if (names != null && names.size() == 1) {
            return new Resolution.Named(names.iterator().next());
        }
        if (names != null) {
            return new Resolution.Unnamed("the catalogs of card " + card + " give type " + typeId
                    + " two different names, \"" + String.join("\" and \"", names) + "\", so it is ambiguous");
        }
        VgpuTypeNames answer = resolverAnswers.computeIfAbsent(card, this::ask);
        String name = answer.name(typeId).map(CardCatalogs::collapseWhitespace).orElse("");
        if (!name.isEmpty()) {
            return new Resolution.Named(name);
        }
        Identity identity = identify(card);
        Optional<TypeNameMemory.Learned> remembered = identity.card().flatMap(c -> memory.recall(root, c, typeId));
        if (remembered.isPresent()) {
            if (!remembered.get().announced()) {
                LOG.info("vendor-vfio: card {}: naming vGPU type {} \"{}\" as learned earlier from {}: neither the"
                        + " card's catalogs ({}) nor the vGPU type resolver ({}) name it now", card, typeId,
                        remembered.get().name(), remembered.get().from(),
                        types == null ? "none lists any type, as on a full card" : "they do not list it",
                        reason(answer, "it does not list it"));
            }
            return new Resolution.Named(remembered.get().name());
        }
        return new Resolution.Unnamed("neither the catalogs of card " + card
                + (types == null ? " (none lists any type)" : " (they do not list it)")
                + " nor the vGPU type resolver (" + (answer instanceof VgpuTypeNames.Failed failed
                        ? "it failed: " + failed.reason() + "; retried at the next scan"
                        : reason(answer, "it does not list it among the card's types"))
                + ") name type " + typeId + (identity instanceof Unidentified unidentified
                        ? ", and no name learned earlier is used since " + unidentified.problem()
                        : ", and no name was learned for it on this card earlier"));
    }

    /** Why the resolver named nothing: its reason, or {@code whenAnswered} when it answered. */
    private static String reason(VgpuTypeNames answer, String whenAnswered) {
        if (answer instanceof VgpuTypeNames.Failed failed) {
            return failed.reason();
        }
        if (answer instanceof VgpuTypeNames.Unavailable unavailable) {
            return unavailable.reason();
        }
        return whenAnswered;
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
        if (answer instanceof VgpuTypeNames.Answered answered) {
            identify(card).card().ifPresent(identified -> answered.names().forEach((typeId, name) -> {
                String collapsed = collapseWhitespace(name);
                if (!collapsed.isEmpty()) {
                    memory.learn(root, identified, typeId, collapsed, "the vGPU type resolver");
                }
            }));
        }
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
