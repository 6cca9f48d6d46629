package dev.vgpu.testing;

import dev.vgpu.core.PciAddress;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Everything a {@link VgpuManagerSimulator} knows, and the driver rules it applies: the cards, how many VFs each has
 * enabled, which VF holds which type, which VFs a VM holds, the injected faults and the write count. Kept in a text
 * file in the tree ({@value #FILE}) so that another process can reopen the same host:
 * <pre>
 * vgpu-simulator v1
 * attempts	3
 * card	0000:41:00.0	26b9	48	16	16	-1	5160	true
 * type	0000:41:00.0	1153	12	0	NVIDIA L40S-12Q
 * vgpu	0000:41:00.4	1153
 * held	0000:41:00.4
 * fault	5	FAIL
 * faults-from	9
 * </pre>
 * Fields are separated by one tab; a type's name is its last field. Confined to one operation of the simulator.
 */
final class SimulatorState {

    /** The state file's name under the host root. */
    static final String FILE = ".vgpu-simulator.v1";
    static final String HEADER = "vgpu-simulator v1";

    /** Write attempts so far, refused and injected failures included. */
    long attempts;
    final Map<PciAddress, Card> cards = new TreeMap<>();
    final Set<PciAddress> held = new TreeSet<>();
    /** Attempt number → the fault it meets. */
    final Map<Long, VgpuManagerSimulator.WriteFault> faults = new TreeMap<>();
    /** Every attempt from this number on fails; 0 for none. */
    long failingFrom;

    /** One card: what it is, how many VFs it has enabled and what they hold. */
    static final class Card {
        final SimulatedCard spec;
        int numVfs;
        /** VF index → the type it holds; VFs without a vGPU are absent. */
        final Map<Integer, Long> vgpus = new TreeMap<>();

        Card(SimulatedCard spec, int numVfs) {
            this.spec = spec;
            this.numVfs = numVfs;
        }

        PciAddress pf() {
            return PciAddress.parse(spec.pf());
        }

        PciAddress vf(int index) {
            return PciAddress.parse(SysfsTree.vfAddress(spec.pf(), index));
        }

        /**
         * What a VF without a vGPU lists now: every type when the card holds none; otherwise the types of the size
         * it holds (one size per card) that still fit in the framebuffer and under their own instance limit.
         */
        Map<Long, String> creatable() {
            int used = 0;
            Integer size = null;
            Map<Long, Integer> counts = new TreeMap<>();
            for (long id : vgpus.values()) {
                SimulatedType type = spec.type(id);
                used += type.framebufferGb();
                size = type.framebufferGb();
                counts.merge(id, 1, Integer::sum);
            }
            Map<Long, String> listed = new TreeMap<>();
            for (SimulatedType type : spec.types()) {
                boolean sameSize = size == null || type.framebufferGb() == size;
                boolean fits = used + type.framebufferGb() <= spec.framebufferGb();
                boolean underLimit = type.maxInstances() == 0
                        || counts.getOrDefault(type.id(), 0) < type.maxInstances();
                if (sameSize && fits && underLimit) {
                    listed.put(type.id(), type.name());
                }
            }
            return listed;
        }

        /** What VF {@code index} lists: nothing once it holds a vGPU, else {@link #creatable()}. */
        Map<Long, String> listedBy(int index) {
            return vgpus.containsKey(index) ? Map.of() : creatable();
        }
    }

    /** The card and index of a VF address that is enabled now; null when it is none. */
    Located locate(PciAddress vf) {
        for (Card card : cards.values()) {
            for (int i = 0; i < card.numVfs; i++) {
                if (card.vf(i).equals(vf)) {
                    return new Located(card, i);
                }
            }
        }
        return null;
    }

    /** An enabled VF: its card and index. */
    record Located(Card card, int index) {
    }

    String format() {
        StringBuilder text = new StringBuilder(HEADER).append('\n');
        text.append("attempts\t").append(attempts).append('\n');
        for (Card card : cards.values()) {
            SimulatedCard spec = card.spec;
            text.append(String.join("\t", "card", spec.pf(), String.format(Locale.ROOT, "%04x", spec.deviceId()),
                    Integer.toString(spec.framebufferGb()), Integer.toString(spec.totalVfs()),
                    Integer.toString(card.numVfs), Integer.toString(spec.numa()), Integer.toString(spec.firstGroup()),
                    Boolean.toString(spec.catalogOnPf()))).append('\n');
            for (SimulatedType type : spec.types()) {
                text.append(String.join("\t", "type", spec.pf(), Long.toString(type.id()),
                        Integer.toString(type.framebufferGb()), Integer.toString(type.maxInstances()), type.name()))
                        .append('\n');
            }
            card.vgpus.forEach((index, id) -> text.append("vgpu\t").append(card.vf(index)).append('\t').append(id)
                    .append('\n'));
        }
        held.forEach(vf -> text.append("held\t").append(vf).append('\n'));
        faults.forEach((attempt, fault) -> text.append("fault\t").append(attempt).append('\t').append(fault)
                .append('\n'));
        if (failingFrom > 0) {
            text.append("faults-from\t").append(failingFrom).append('\n');
        }
        return text.toString();
    }

    /** Reads what {@link #format()} wrote; anything else is an {@link IOException} naming the line. */
    static SimulatorState parse(String text) throws IOException {
        String[] lines = text.split("\n", -1);
        if (!lines[0].equals(HEADER)) {
            throw new IOException("not a simulator state (first line is not \"" + HEADER + "\")");
        }
        SimulatorState state = new SimulatorState();
        Map<String, List<SimulatedType>> types = new TreeMap<>();
        Map<String, String[]> cardLines = new TreeMap<>();
        List<String[]> vgpus = new ArrayList<>();
        for (int n = 1; n < lines.length; n++) {
            if (lines[n].isEmpty()) {
                continue;
            }
            String[] f = lines[n].split("\t", -1);
            try {
                switch (f[0]) {
                    case "attempts" -> state.attempts = Long.parseLong(f[1]);
                    case "card" -> cardLines.put(f[1], f);
                    case "type" -> types.computeIfAbsent(f[1], pf -> new ArrayList<>()).add(new SimulatedType(
                            Long.parseLong(f[2]), f[5], Integer.parseInt(f[3]), Integer.parseInt(f[4])));
                    case "vgpu" -> vgpus.add(f);
                    case "held" -> state.held.add(PciAddress.parse(f[1]));
                    case "fault" -> state.faults.put(Long.parseLong(f[1]),
                            VgpuManagerSimulator.WriteFault.valueOf(f[2]));
                    case "faults-from" -> state.failingFrom = Long.parseLong(f[1]);
                    default -> throw new IllegalArgumentException("unknown record " + f[0]);
                }
            } catch (RuntimeException e) {
                throw new IOException("simulator state line " + (n + 1) + " is not understood: " + e.getMessage(), e);
            }
        }
        for (String[] f : cardLines.values()) {
            try {
                SimulatedCard spec = new SimulatedCard(f[1], Integer.parseInt(f[2], 16), Integer.parseInt(f[3]),
                        Integer.parseInt(f[4]), types.getOrDefault(f[1], List.of()), 0, Integer.parseInt(f[6]),
                        Integer.parseInt(f[7]), Boolean.parseBoolean(f[8]));
                state.cards.put(PciAddress.parse(f[1]), new Card(spec, Integer.parseInt(f[5])));
            } catch (RuntimeException e) {
                throw new IOException("simulator state: card " + f[1] + " is not understood: " + e.getMessage(), e);
            }
        }
        for (String[] f : vgpus) {
            Located vf = state.locate(PciAddress.parse(f[1]));
            if (vf == null) {
                throw new IOException("simulator state: vGPU on " + f[1] + ", which is no enabled VF");
            }
            vf.card().vgpus.put(vf.index(), Long.parseLong(f[2]));
        }
        return state;
    }
}
