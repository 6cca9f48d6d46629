package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Carries plans out: for each card asked for, reads it, {@link Planner plans}, writes each step through
 * {@link HostWrites} and reads it back through {@link HostReader}. Cards are handled one after the other and apart:
 * one card's failure never touches another.
 *
 * <p>Per card:
 * <ol>
 * <li>Read it, with the VFs {@link InUse in use} now. A refusal writes nothing ({@link CardOutcome.Refused}); a card
 *     that already matches writes nothing ({@link CardOutcome.Unchanged}).</li>
 * <li>Before each write: the target VF must not be in use now (asked again), must hold what the plan expects, and for
 *     a new vGPU its {@code creatable_vgpu_types} must list the type now. After each write: read the card back; the
 *     VF must hold the written type (the card the written VF count, with that many VFs).</li>
 * <li>A plan that enabled VFs is planned again on a fresh read ({@link CardPlan#readAgain()}).</li>
 * <li>A whole layout must plan to nothing on a last read ({@link CardOutcome.Applied}).</li>
 * <li>When anything fails, the card is put back as it was read in step 1: VFs that hold another type are cleared,
 *     types they held are written back, VFs this run enabled are disabled; VFs in use are never written, even then.
 *     Put back exactly: {@link CardOutcome.RolledBack}; otherwise {@link CardOutcome.RollbackFailed}, logged at
 *     ERROR with each difference.</li>
 * </ol>
 * Every write is logged at INFO in words, refusals and rollbacks at WARN. Host text in messages is escaped.
 * <pre>{@code
 * SysfsVgpuHost host = SysfsVgpuHost.at(Path.of("/"), nvmlNames);
 * ApplyReport report = new Applier(host, host).apply(Map.of(pf, CardDemand.layout(Map.of("L40S-12Q", 4))), inUse);
 * report.cards().forEach(outcome -> System.out.println(outcome.describe()));
 * }</pre>
 * Holds no state of its own between calls. One {@code apply} at a time per host: the caller serializes them (the
 * daemon applies on its one owner thread); nothing else may write the same cards meanwhile.
 */
public final class Applier {

    private final HostReader reader;
    private final HostWrites writes;

    /** An applier that reads through {@code reader} and writes through {@code writes}. */
    public Applier(HostReader reader, HostWrites writes) {
        this.reader = Objects.requireNonNull(reader, "reader");
        this.writes = Objects.requireNonNull(writes, "writes");
    }

    /** Applies a demand to each card named, in address order. */
    public ApplyReport apply(Map<PciAddress, CardDemand> demands, InUse inUse) {
        Objects.requireNonNull(inUse, "inUse");
        List<CardOutcome> outcomes = new ArrayList<>();
        Map<PciAddress, CardTypes> types = new HashMap<>();
        Map<PciAddress, Map<String, Integer>> vgpus = new HashMap<>();
        new TreeMap<>(demands).forEach((pf, demand) -> {
            CardRun run = new CardRun(reader, writes, inUse, pf, demand);
            outcomes.add(run.run());
            run.typesRead().ifPresent(read -> types.put(pf, read));
            run.lastRead().ifPresent(card -> vgpus.put(pf, ApplyReport.byProfile(card)));
        });
        return new ApplyReport(outcomes, types, vgpus);
    }

    /** Applies a demand to one card. */
    public CardOutcome apply(PciAddress card, CardDemand demand, InUse inUse) {
        return apply(Map.of(card, demand), inUse).cards().get(0);
    }
}
