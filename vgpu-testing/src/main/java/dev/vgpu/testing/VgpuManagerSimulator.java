package dev.vgpu.testing;

import dev.vgpu.core.PciAddress;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The NVIDIA vGPU manager of vendor-VFIO cards, simulated on a {@link SysfsTree}: a host whose writes follow the
 * driver's rules, for tests and samples that drive the write side (a configurator). A file tree cannot refuse a
 * write, so writes go through {@link #writeVfCount} and {@link #writeType}, which check the rules, refuse as the
 * kernel would (an {@link IOException} naming the file), and otherwise change the tree as the driver would: a
 * reader of the tree (the {@code vendor-vfio} source, a configurator's sysfs reader) sees what it would see on a
 * real host.
 *
 * <p>The rules (what is unverified on real hardware is said in the project's docs/CONFIGURATOR.md):
 * <ul>
 * <li>{@code sriov_numvfs}: enabling needs 0 VFs before and at most {@code sriov_totalvfs} ("Device or resource
 *     busy" / "Invalid argument"); it creates the VF functions (bound to {@code nvidia}, own IOMMU groups,
 *     {@code physfn}/{@code virtfnN}, {@code nvidia/} files). Disabling (0) removes them, refused while a VF is held
 *     or holds a vGPU. Writing the count it has changes nothing.</li>
 * <li>{@code current_vgpu_type}: a type id creates that vGPU only when the VF holds none and the VF lists the type
 *     now; 0 destroys the vGPU it holds. A VF a VM holds ({@link #hold}) refuses every write.</li>
 * <li>Catalogs: a VF without a vGPU (and the PF, when the card has a PF catalog) lists every type of the card while
 *     it holds no vGPU; once it holds some, only types of that framebuffer size that still fit (framebuffer and the
 *     type's instance limit): creating a vGPU shrinks every sibling's list, destroying it grows them back. A VF
 *     holding a vGPU lists nothing, and a full card lists only the header everywhere.</li>
 * <li>{@link #reboot()}: every type back to 0 and the VFs gone ({@code sriov_numvfs} 0); {@link #rebootKeepingVfs()}
 *     keeps the VFs. Holds end with a reboot; injected faults stay.</li>
 * </ul>
 * Faults for tests of the caller's error handling: {@link #failWrite} makes one write attempt fail with an I/O error
 * (or return without taking effect), {@link #failWritesFrom} every attempt from one on. {@link #writeAttempts()}
 * counts every attempt, refused ones included, so "a second run writes nothing" can be checked.
 *
 * <p>The state lives in the file {@code .vgpu-simulator.v1} at the root of the tree, read and written by every
 * operation: {@link #open} in another process (a daemon run as {@code java -jar}) continues where this one left
 * off. Each attempt is also appended to {@code .vgpu-simulator.log} there. Operations of one instance are
 * synchronized; operations of several instances or processes on one tree must not overlap in time.
 * <pre>{@code
 * VgpuManagerSimulator host = VgpuManagerSimulator.create(SysfsTree.at(dir),
 *         SimulatedCard.l40s("0000:41:00.0"), SimulatedCard.l40s("0000:81:00.0").withEnabledVfs(0));
 * host.writeType(PciAddress.parse("0000:41:00.4"), 1153);    // NVIDIA L40S-12Q
 * host.hold("0000:41:00.4");                                  // a VM holds it now
 * host.reboot();
 * VgpuManagerSimulator again = VgpuManagerSimulator.open(dir); // e.g. in the daemon's process
 * }</pre>
 */
public final class VgpuManagerSimulator {

    /** The state file's name at the root of a simulated tree. */
    public static final String STATE_FILE = SimulatorState.FILE;
    /** The write log's name at the root of a simulated tree: one line per write attempt. */
    public static final String LOG_FILE = ".vgpu-simulator.log";

    private final SysfsTree tree;

    /** What an injected fault does to the write attempt it meets. */
    public enum WriteFault {
        /** The write fails with an I/O error, changing nothing. */
        FAIL,
        /** The write returns as if it worked, changing nothing (only a read-back notices). */
        IGNORE
    }

    private VgpuManagerSimulator(SysfsTree tree) {
        this.tree = tree;
    }

    /** Writes the cards into the tree (replacing functions with their addresses) and starts simulating them. */
    public static VgpuManagerSimulator create(SysfsTree tree, SimulatedCard... cards) {
        return create(tree, List.of(cards));
    }

    /** Writes the cards into the tree (replacing functions with their addresses) and starts simulating them. */
    public static VgpuManagerSimulator create(SysfsTree tree, List<SimulatedCard> cards) {
        Objects.requireNonNull(tree, "tree");
        SimulatorState state = new SimulatorState();
        for (SimulatedCard card : cards) {
            SimulatorState.Card simulated = new SimulatorState.Card(card, card.enabledVfs());
            if (state.cards.put(PciAddress.parse(card.pf()), simulated) != null) {
                throw new IllegalArgumentException("card " + card.pf() + " is given twice");
            }
            tree.sriovCard(card.pf(), card.deviceId()).numa(card.numa()).totalVfs(card.totalVfs())
                    .catalogOnPf(card.catalogOnPf()).virtualFunctions(card.enabledVfs(), card.firstGroup()).create();
        }
        VgpuManagerSimulator simulator = new VgpuManagerSimulator(tree);
        simulator.save(state);
        state.cards.values().forEach(simulator::render);
        return simulator;
    }

    /**
     * Continues simulating the host a simulator created under {@code root}.
     *
     * @throws IOException when the root has no (readable) simulator state
     */
    public static VgpuManagerSimulator open(Path root) throws IOException {
        VgpuManagerSimulator simulator = new VgpuManagerSimulator(SysfsTree.at(root));
        simulator.load();
        return simulator;
    }

    /** True when a simulator created a host under {@code root}. */
    public static boolean isSimulated(Path root) {
        return Files.isRegularFile(root.resolve(STATE_FILE));
    }

    /** The simulated tree. */
    public SysfsTree tree() {
        return tree;
    }

    // ---- the writes -----------------------------------------------------------------------------------------

    /**
     * {@code echo count > <pf>/sriov_numvfs}.
     *
     * @throws IOException as the kernel refuses: no such card, VFs already enabled, more than
     *                     {@code sriov_totalvfs}, disabling while a VF is held or holds a vGPU, an injected fault
     */
    public synchronized void writeVfCount(PciAddress pf, int count) throws IOException {
        Attempt write = attempt(pf, "sriov_numvfs", count);
        if (write == null) {
            return;
        }
        SimulatorState.Card card = write.state().cards.get(pf);
        if (card == null) {
            throw write.refuse(new NoSuchFileException(write.file().toString(), null, "no simulated card " + pf));
        }
        if (count < 0 || count > card.spec.totalVfs()) {
            throw write.refuse("Invalid argument: the card has at most " + card.spec.totalVfs() + " VFs");
        }
        if (count != card.numVfs && count != 0 && card.numVfs != 0) {
            throw write.refuse("Device or resource busy: " + card.numVfs + " VFs are enabled; write 0 first");
        }
        if (count == 0 && card.numVfs != 0) {
            for (int i = 0; i < card.numVfs; i++) {
                boolean held = write.state().held.contains(card.vf(i));
                if (held || card.vgpus.containsKey(i)) {
                    throw write.refuse("Device or resource busy: VF " + card.vf(i)
                            + (held ? " is held by a VM" : " holds a vGPU"));
                }
            }
        }
        card.numVfs = count;
        write.commit(card);
    }

    /**
     * {@code echo typeId > <vf>/nvidia/current_vgpu_type}.
     *
     * @throws IOException as the driver refuses: no such VF, held by a VM, a vGPU already there, a type the VF
     *                     does not list now, an injected fault
     */
    public synchronized void writeType(PciAddress vf, long typeId) throws IOException {
        Attempt write = attempt(vf, "nvidia/current_vgpu_type", typeId);
        if (write == null) {
            return;
        }
        SimulatorState.Located at = write.state().locate(vf);
        if (at == null) {
            throw write.refuse(new NoSuchFileException(write.file().toString(), null, "no enabled simulated VF " + vf));
        }
        if (write.state().held.contains(vf)) {
            throw write.refuse("Device or resource busy: a VM holds VF " + vf);
        }
        SimulatorState.Card card = at.card();
        if (typeId == 0) {
            card.vgpus.remove(at.index());
        } else if (card.vgpus.containsKey(at.index())) {
            throw write.refuse("Device or resource busy: VF " + vf + " holds type " + card.vgpus.get(at.index())
                    + "; write 0 first");
        } else if (!card.listedBy(at.index()).containsKey(typeId)) {
            throw write.refuse("Invalid argument: type " + typeId + " is not creatable on " + vf + " now");
        } else {
            card.vgpus.put(at.index(), typeId);
        }
        write.commit(card);
    }

    // ---- what VMs and the machine do -------------------------------------------------------------------------

    /** A VM holds the VF now: every write to it, and disabling its card's VFs, is refused. */
    public synchronized VgpuManagerSimulator hold(String vf) {
        SimulatorState state = loadUnchecked();
        state.held.add(requireVf(state, vf));
        save(state);
        return this;
    }

    /** The VM let the VF go. */
    public synchronized VgpuManagerSimulator release(String vf) {
        SimulatorState state = loadUnchecked();
        state.held.remove(PciAddress.parse(vf));
        save(state);
        return this;
    }

    /** A reboot that drops the VFs: every card back to {@code sriov_numvfs} 0, no vGPU, no hold. */
    public synchronized VgpuManagerSimulator reboot() {
        return reboot(false);
    }

    /** A reboot after which the VFs are still enabled (as a boot-time unit could leave them): every type 0. */
    public synchronized VgpuManagerSimulator rebootKeepingVfs() {
        return reboot(true);
    }

    private VgpuManagerSimulator reboot(boolean keepVfs) {
        SimulatorState state = loadUnchecked();
        state.held.clear();
        for (SimulatorState.Card card : state.cards.values()) {
            card.vgpus.clear();
            if (!keepVfs) {
                card.numVfs = 0;
            }
        }
        save(state);
        state.cards.values().forEach(this::render);
        return this;
    }

    // ---- faults -----------------------------------------------------------------------------------------------

    /** The {@code nth} write attempt from now (1: the next) meets the fault. */
    public synchronized VgpuManagerSimulator failWrite(int nth, WriteFault fault) {
        if (nth < 1) {
            throw new IllegalArgumentException("the first write from now is 1, got " + nth);
        }
        SimulatorState state = loadUnchecked();
        state.faults.put(state.attempts + nth, Objects.requireNonNull(fault, "fault"));
        save(state);
        return this;
    }

    /** Every write attempt from the {@code nth} from now on fails with an I/O error. */
    public synchronized VgpuManagerSimulator failWritesFrom(int nth) {
        if (nth < 1) {
            throw new IllegalArgumentException("the first write from now is 1, got " + nth);
        }
        SimulatorState state = loadUnchecked();
        state.failingFrom = state.attempts + nth;
        save(state);
        return this;
    }

    /** No more injected faults. */
    public synchronized VgpuManagerSimulator clearFaults() {
        SimulatorState state = loadUnchecked();
        state.faults.clear();
        state.failingFrom = 0;
        save(state);
        return this;
    }

    // ---- what it holds ------------------------------------------------------------------------------------------

    /** Every write attempt so far, in this process or another. */
    public synchronized long writeAttempts() {
        return loadUnchecked().attempts;
    }

    /** The log lines of every write attempt so far: {@code 3 write 1153 to 0000:41:00.4/... : done}. */
    public synchronized List<String> writeLog() {
        Path log = tree.path(LOG_FILE);
        try {
            return Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + log, e);
        }
    }

    /** How many VFs a card has enabled. */
    public synchronized int vfCount(String pf) {
        return requireCard(pf).numVfs;
    }

    /** Each enabled VF of a card → the type it holds (0 for none), in address order. */
    public synchronized Map<String, Long> vgpus(String pf) {
        SimulatorState.Card card = requireCard(pf);
        Map<String, Long> vfs = new TreeMap<>();
        for (int i = 0; i < card.numVfs; i++) {
            vfs.put(card.vf(i).toString(), card.vgpus.getOrDefault(i, 0L));
        }
        return vfs;
    }

    /** What a VF lists in {@code creatable_vgpu_types} now. */
    public synchronized Map<Long, String> creatable(String vf) {
        SimulatorState state = loadUnchecked();
        SimulatorState.Located at = state.locate(requireVf(state, vf));
        return at.card().listedBy(at.index());
    }

    // ---- state and tree ----------------------------------------------------------------------------------------

    /** One write attempt: the state it reads and changes, the file written, the attempt in words. */
    private final class Attempt {
        private final SimulatorState state;
        private final Path file;
        private final String what;

        Attempt(SimulatorState state, Path file, String what) {
            this.state = state;
            this.file = file;
            this.what = what;
        }

        SimulatorState state() {
            return state;
        }

        Path file() {
            return file;
        }

        /** Saves the count, logs the refusal and gives the exception to throw. */
        IOException refuse(IOException refusal) {
            save(state);
            log(state, what, "refused: " + refusal.getMessage());
            return refusal;
        }

        /** {@link #refuse(IOException)} with the kernel's error on the file. */
        IOException refuse(String reason) {
            return refuse(new FileSystemException(file.toString(), null, reason));
        }

        /** Saves the state, shows the card in the tree and logs the write. */
        void commit(SimulatorState.Card card) {
            save(state);
            render(card);
            log(state, what, "done");
        }
    }

    /**
     * Counts a write attempt and meets it with its fault: null when the fault swallows it, an exception when the
     * fault fails it.
     */
    private Attempt attempt(PciAddress function, String attribute, long value) throws IOException {
        SimulatorState state = load();
        Attempt attempt = new Attempt(state, tree.path(SysfsTree.PCI_BUS).resolve(function.toString())
                .resolve(attribute), "write " + value + " to " + function + "/" + attribute);
        state.attempts++;
        WriteFault fault = state.faults.remove(state.attempts);
        if (fault == null && state.failingFrom > 0 && state.attempts >= state.failingFrom) {
            fault = WriteFault.FAIL;
        }
        if (fault == WriteFault.FAIL) {
            throw attempt.refuse("Input/output error (injected fault)");
        }
        if (fault == WriteFault.IGNORE) {
            save(state);
            log(state, attempt.what, "ignored (injected)");
            return null;
        }
        return attempt;
    }

    private SimulatorState.Card requireCard(String pf) {
        SimulatorState.Card card = loadUnchecked().cards.get(PciAddress.parse(pf));
        if (card == null) {
            throw new IllegalArgumentException("no simulated card " + pf);
        }
        return card;
    }

    private PciAddress requireVf(SimulatorState state, String vf) {
        PciAddress address = PciAddress.parse(vf);
        if (state.locate(address) == null) {
            throw new IllegalArgumentException(vf + " is no enabled VF of a simulated card");
        }
        return address;
    }

    private SimulatorState load() throws IOException {
        return SimulatorState.parse(Files.readString(tree.path(STATE_FILE), StandardCharsets.UTF_8));
    }

    private SimulatorState loadUnchecked() {
        try {
            return load();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the simulator state under " + tree.root(), e);
        }
    }

    private void save(SimulatorState state) {
        TreeFiles.replace(tree.path(STATE_FILE), state.format());
    }

    private void log(SimulatorState state, String what, String result) {
        try {
            Files.writeString(tree.path(LOG_FILE), state.attempts + " " + what + ": " + result + "\n",
                    StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to " + tree.path(LOG_FILE), e);
        }
    }

    /** Makes the tree show one card as its state says: VF functions, types, every catalog, the VF count. */
    private void render(SimulatorState.Card card) {
        SimulatedCard spec = card.spec;
        Path pfDir = tree.devicePath(spec.pf()).orElseThrow(() -> new IllegalStateException(
                "simulated card " + spec.pf() + " is missing from the tree"));
        List<String> present = tree.virtualFunctions(spec.pf());
        for (int i = card.numVfs; i < present.size(); i++) {
            tree.removeFunction(present.get(i));
        }
        SriovCard.VfLayout layout = new SriovCard.VfLayout(spec.pf(), spec.deviceId(), spec.numa(), spec.firstGroup(),
                null, PciFunction.defaultParent(spec.pf()));
        for (int i = present.size(); i < card.numVfs; i++) {
            SriovCard.writeVf(tree, pfDir, i, layout, SysfsTree.creatableTypesText(card.listedBy(i)));
        }
        for (int i = 0; i < card.numVfs; i++) {
            Path vf = tree.devicePath(card.vf(i).toString()).orElseThrow();
            TreeFiles.replace(vf.resolve("nvidia/current_vgpu_type"), card.vgpus.getOrDefault(i, 0L) + "\n");
            TreeFiles.replace(vf.resolve("nvidia/creatable_vgpu_types"),
                    SysfsTree.creatableTypesText(card.listedBy(i)));
        }
        if (spec.catalogOnPf()) {
            TreeFiles.replace(pfDir.resolve("nvidia/creatable_vgpu_types"),
                    SysfsTree.creatableTypesText(card.creatable()));
        }
        TreeFiles.replace(pfDir.resolve("sriov_numvfs"), card.numVfs + "\n");
    }
}
