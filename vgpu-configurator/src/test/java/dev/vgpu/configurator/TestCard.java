package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;

/**
 * Card facts for pure planner tests, listing what the driver would: a free VF lists every type while the card holds
 * none, else the types of the size it holds; a VF holding a vGPU lists nothing (no framebuffer limit here: that is
 * the simulator's job).
 */
final class TestCard {

    static final String PF = "0000:41:00.0";
    static final Map<Long, String> L40S = Map.of(1147L, "NVIDIA L40S-1Q", 1150L, "NVIDIA L40S-4Q",
            1152L, "NVIDIA L40S-8Q", 1153L, "NVIDIA L40S-12Q", 1163L, "NVIDIA L40S-12A", 1155L, "NVIDIA L40S-24Q",
            1156L, "NVIDIA L40S-48Q");

    private final PciAddress pf;
    private int totalVfs;
    private int numVfs;
    private final Map<Integer, Long> held = new TreeMap<>();
    private final Set<Integer> used = new HashSet<>();
    private Map<Long, String> types = L40S;
    private boolean namesListed = true;
    private final List<String> problems = new ArrayList<>();
    private Map<Long, String> resolved = Map.of();

    private TestCard(String pf) {
        this.pf = PciAddress.parse(pf);
    }

    /** A card with {@code vfs} VFs enabled (of as many possible), all free. */
    static TestCard withVfs(int vfs) {
        TestCard card = new TestCard(PF);
        card.totalVfs = vfs;
        card.numVfs = vfs;
        return card;
    }

    /** A card with none of its {@code total} VFs enabled. */
    static TestCard withoutVfs(int total) {
        TestCard card = new TestCard(PF);
        card.totalVfs = total;
        return card;
    }

    TestCard holding(int vf, long type) {
        held.put(vf, type);
        return this;
    }

    TestCard inUse(int... vfs) {
        for (int vf : vfs) {
            used.add(vf);
        }
        return this;
    }

    TestCard types(Map<Long, String> names) {
        this.types = names;
        return this;
    }

    /** No catalog lists anything (a full card, or no PF catalog on a card without VFs). */
    TestCard listingNothing() {
        this.namesListed = false;
        return this;
    }

    TestCard problem(String problem) {
        problems.add(problem);
        return this;
    }

    /** VF {@code index} of the card: routing id of the PF + 4 + index, as NVIDIA cards place them. */
    static PciAddress vf(int index) {
        return new PciAddress(0, 0x41, (4 + index) >> 3, (4 + index) & 7);
    }

    /** Names a resolver (NVML) adds without any catalog listing them. */
    TestCard alsoNamed(Map<Long, String> names) {
        this.resolved = Map.copyOf(names);
        return this;
    }

    CardFacts build() {
        OptionalInt size = held.values().stream().map(types::get).filter(n -> n != null)
                .map(ProfileNames::framebufferGb).filter(OptionalInt::isPresent).mapToInt(OptionalInt::getAsInt)
                .findFirst();
        Map<Long, String> listed = new TreeMap<>();
        if (namesListed) {
            types.forEach((id, name) -> {
                if (size.isEmpty() || ProfileNames.framebufferGb(name).equals(size)) {
                    listed.put(id, name);
                }
            });
        }
        List<VfFacts> vfs = new ArrayList<>();
        for (int i = 0; i < numVfs; i++) {
            long type = held.getOrDefault(i, 0L);
            vfs.add(new VfFacts(vf(i), i, type, type == 0 ? listed : Map.of(), used.contains(i)));
        }
        boolean complete = namesListed && held.isEmpty();
        CardTypes names = new CardTypes(listed, Set.of(), complete).merge(new CardTypes(resolved, Set.of(), false));
        return new CardFacts(pf, 0x26b9, totalVfs, numVfs, vfs, names, problems);
    }
}
