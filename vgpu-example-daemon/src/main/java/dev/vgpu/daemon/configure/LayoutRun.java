package dev.vgpu.daemon.configure;

import dev.vgpu.configurator.Applier;
import dev.vgpu.configurator.ApplyReport;
import dev.vgpu.configurator.CardDecision;
import dev.vgpu.configurator.CardDemand;
import dev.vgpu.configurator.CardFacts;
import dev.vgpu.configurator.CardOutcome;
import dev.vgpu.configurator.CardPlan;
import dev.vgpu.configurator.CardRefusal;
import dev.vgpu.configurator.HostFacts;
import dev.vgpu.configurator.InUse;
import dev.vgpu.configurator.KnownTypeNames;
import dev.vgpu.configurator.Planner;
import dev.vgpu.configurator.file.InvalidVgpuConfigException;
import dev.vgpu.configurator.file.LayoutDemands;
import dev.vgpu.configurator.file.VgpuLayout;
import dev.vgpu.configurator.sysfs.SysfsVgpuHost;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.internal.Printable;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.StateDirectory;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.sysfs.VendorVfioSource;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One use of a layout on a host, shared by {@code configure} and {@code serve}: read the cards, select them by GPU
 * index and device filter, then apply ({@link #apply}) or only plan ({@link #plan}), with every card's result in
 * words. Holds no state; runs on the caller's thread (main for {@code configure}, the agent's for {@code serve}).
 */
final class LayoutRun {

    /** Refusals that are mistakes in the file, not states of the host: {@code configure} exits 2 for them. */
    static final Set<CardRefusal.Kind> FILE_KINDS = Set.of(CardRefusal.Kind.UNKNOWN_PROFILE,
            CardRefusal.Kind.AMBIGUOUS_PROFILE, CardRefusal.Kind.INVALID_DEMAND);

    private LayoutRun() {
    }

    /** The host as read for a layout, and what the layout asks of each card. */
    record Selection(HostFacts facts, LayoutDemands demands) {
    }

    /**
     * Reads the host's cards (VFs in use marked) and selects them.
     *
     * @throws IOException                when the cards cannot be listed, or which VFs are in use cannot be told
     * @throws InvalidVgpuConfigException when two entries of the layout name one card
     */
    static Selection select(VgpuLayout layout, SysfsVgpuHost reader, InUse inUse)
            throws IOException, InvalidVgpuConfigException {
        Set<PciAddress> used;
        try {
            used = inUse.vfs();
        } catch (IOException e) {
            throw new IOException("which VFs are in use cannot be told, so nothing is written: " + e.getMessage(), e);
        }
        HostFacts facts;
        try {
            facts = reader.read(used);
        } catch (IOException e) {
            throw new IOException("the host's PCI functions cannot be listed under " + reader.root() + " ("
                    + Printable.of(String.valueOf(e.getMessage()), 200) + "), so nothing is written", e);
        }
        return new Selection(facts, layout.demands(facts));
    }

    /** Applies the selection's demands; the report has every card's outcome. */
    static ApplyReport apply(Selection selection, SysfsVgpuHost reader, LayoutHost host, InUse inUse) {
        return new Applier(reader, host.writes()).apply(selection.demands().demands(), inUse);
    }

    /** The card's outcome in words, with its GPU index and the entry it comes from. */
    static String describe(LayoutDemands demands, CardOutcome outcome) {
        return demands.describeCard(outcome.card()).orElse(outcome.card().toString()) + ": " + outcome.describe();
    }

    /** Whether a refusal is a mistake in the file ({@link #FILE_KINDS}). */
    static boolean fileMistake(CardOutcome outcome) {
        return outcome instanceof CardOutcome.Refused refused && FILE_KINDS.stream().anyMatch(refused::has);
    }

    /**
     * A plan without writing: one line per card and per step.
     *
     * @param lines       the words
     * @param matches     whether every card already holds its layout
     * @param refused     whether a card would be refused
     * @param fileMistake whether a refusal is a mistake in the file
     */
    record Plan(List<String> lines, boolean matches, boolean refused, boolean fileMistake) {
    }

    /** Plans every selected card on the facts read; writes nothing. */
    static Plan plan(Selection selection) {
        List<String> lines = new ArrayList<>();
        boolean matches = true;
        boolean refused = false;
        boolean fileMistake = false;
        LayoutDemands demands = selection.demands();
        for (Map.Entry<PciAddress, CardDemand.Layout> entry : demands.cards().entrySet()) {
            CardFacts card = selection.facts().card(entry.getKey()).orElseThrow();
            String name = demands.describeCard(card.pf()).orElseThrow();
            CardDecision decision = Planner.plan(card, entry.getValue());
            if (decision instanceof CardRefusal refusal) {
                matches = false;
                refused = true;
                fileMistake |= FILE_KINDS.stream().anyMatch(refusal::has);
                lines.add(name + ": would be refused, left as it is: " + refusal.describe());
            } else if (((CardPlan) decision).isEmpty()) {
                lines.add(name + ": already holds " + entry.getValue().describe() + " (" + card.describeConfiguration()
                        + "), nothing to write");
            } else {
                matches = false;
                lines.add(name + ": now " + card.describeConfiguration() + "; to hold " + entry.getValue()
                        .describe() + ":");
                ((CardPlan) decision).describe().forEach(step -> lines.add("  " + step));
            }
        }
        return new Plan(lines, matches, refused, fileMistake);
    }

    /**
     * The type names known beside the cards' own catalogs: what the {@code vendor-vfio} source learned earlier and
     * kept in the state directory (read only), so that a card filled before this process started is still named.
     * Nothing when there is no state directory or the host cannot be scanned.
     */
    static VgpuTypeResolver learnedNames(Path root, Optional<Path> stateDir) {
        if (stateDir.isEmpty()) {
            return VgpuTypeResolver.none();
        }
        try {
            return KnownTypeNames.fromDevices(new VendorVfioSource().discover(Host.of(root)
                    .withStateDirectory(StateDirectory.forReading(stateDir.get()))).devices());
        } catch (IOException | RuntimeException e) {
            return VgpuTypeResolver.none();
        }
    }

    /**
     * Keeps the names a run read in the state directory, through the {@code vendor-vfio} source (as {@code serve}'s
     * scans do), so that a later process names a card this run filled. Returns why not, when it could not.
     */
    static Optional<String> recordNames(Path root, Path stateDir, VgpuTypeResolver names) {
        try {
            new VendorVfioSource().discover(Host.of(root).withVgpuTypes(names)
                    .withStateDirectory(StateDirectory.of(stateDir)));
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.of(Printable.of(String.valueOf(e.getMessage()), 200));
        }
    }
}
