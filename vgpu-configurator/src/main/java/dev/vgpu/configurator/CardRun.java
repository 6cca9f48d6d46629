package dev.vgpu.configurator;

import dev.vgpu.configurator.CardRefusal.Kind;
import dev.vgpu.configurator.CardRefusal.Reason;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.internal.Printable;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One card's apply (see {@link Applier}): plan, write, read back, and on failure put the card back. Confined to the
 * applying thread; used once.
 */
final class CardRun {

    private static final Logger LOG = LoggerFactory.getLogger(Applier.class);
    /** Plans of one card at most: the first may only enable VFs, the second does the rest. */
    private static final int ROUNDS = 2;
    /** Tries at putting a card back. */
    private static final int ROLLBACK_PASSES = 2;

    private final HostReader reader;
    private final HostWrites writes;
    private final InUse inUse;
    private final PciAddress pf;
    private final CardDemand demand;
    private final List<Step> done = new ArrayList<>();
    private int written;
    /** The names of every read of the card so far, joined. */
    private CardTypes typesRead;
    /** The card as the last read showed it. */
    private CardFacts current;

    CardRun(HostReader reader, HostWrites writes, InUse inUse, PciAddress pf, CardDemand demand) {
        this.reader = reader;
        this.writes = writes;
        this.inUse = inUse;
        this.pf = pf;
        this.demand = demand;
    }

    /** A step or check that failed, in words, and the kind of refusal it is when nothing was written yet. */
    private static final class Failure extends Exception {
        final Kind kind;

        Failure(String message) {
            this(Kind.UNREADABLE, message);
        }

        Failure(Kind kind, String message) {
            super(message, null, false, false);
            this.kind = kind;
        }
    }

    /** Every type name read during the run, when the card could be read. */
    Optional<CardTypes> typesRead() {
        return Optional.ofNullable(typesRead);
    }

    /** The card as the last read of the run showed it (after a rollback, too), when it could be read. */
    Optional<CardFacts> lastRead() {
        return Optional.ofNullable(current);
    }

    CardOutcome run() {
        CardFacts before;
        try {
            before = read();
        } catch (Failure e) {
            return refused(List.of(new Reason(e.kind, e.getMessage())));
        }
        CardDecision decision = Planner.plan(before, demand);
        if (decision instanceof CardRefusal refusal) {
            return refused(refusal.reasons());
        }
        CardPlan plan = (CardPlan) decision;
        if (plan.isEmpty()) {
            LOG.info("vGPU configurator: card {} already holds {} ({}), nothing to write", pf, demand.describe(),
                    before.describeConfiguration());
            return new CardOutcome.Unchanged(pf);
        }
        LOG.info("vGPU configurator: card {} ({}): applying {}", pf, before.describeConfiguration(),
                demand.describe());
        try {
            for (int round = 1; ; round++) {
                for (Step step : plan.steps()) {
                    execute(step);
                }
                if (!plan.readAgain()) {
                    break;
                }
                if (round == ROUNDS) {
                    throw new Failure("card " + pf + " still needed another look after its VFs were enabled");
                }
                CardDecision next = Planner.plan(read(), demand);
                if (next instanceof CardRefusal refusal) {
                    return refusedAfterEnabling(before, refusal.reasons());
                }
                plan = (CardPlan) next;
            }
            if (demand instanceof CardDemand.Layout) {
                CardDecision check = Planner.plan(read(), demand);
                if (!(check instanceof CardPlan last && last.isEmpty())) {
                    throw new Failure("after its steps card " + pf + " still differs from its layout ("
                            + current.describeConfiguration() + ")");
                }
            }
        } catch (Failure e) {
            return rollBack(before, e.getMessage());
        }
        LOG.info("vGPU configurator: card {} now holds {} ({} writes)", pf, current.describeConfiguration(), written);
        return new CardOutcome.Applied(pf, done);
    }

    private CardOutcome refused(List<Reason> reasons) {
        CardOutcome.Refused refused = new CardOutcome.Refused(pf, reasons, written);
        LOG.warn("vGPU configurator: {}", refused.describe());
        return refused;
    }

    private CardOutcome refusedAfterEnabling(CardFacts before, List<Reason> reasons) {
        Optional<List<String>> problems = restore(before);
        if (problems.isPresent()) {
            return rollbackFailed("refused once its VFs were enabled: " + new CardRefusal(pf, reasons).describe(),
                    problems.get());
        }
        LOG.info("vGPU configurator: card {}: its VFs were enabled to read its types, and are disabled again", pf);
        return refused(reasons);
    }

    private CardOutcome rollBack(CardFacts before, String reason) {
        LOG.warn("vGPU configurator: card {}: {}; rolling it back", pf, reason);
        Optional<List<String>> problems = restore(before);
        if (problems.isPresent()) {
            return rollbackFailed(reason, problems.get());
        }
        CardOutcome.RolledBack outcome = new CardOutcome.RolledBack(pf, reason, written);
        LOG.warn("vGPU configurator: {} ({} writes)", outcome.describe(), written);
        return outcome;
    }

    private CardOutcome rollbackFailed(String reason, List<String> problems) {
        CardOutcome.RollbackFailed outcome = new CardOutcome.RollbackFailed(pf, reason, problems, written);
        LOG.error("vGPU configurator: {}", outcome.describe());
        return outcome;
    }

    // ---- steps ---------------------------------------------------------------------------------------------

    private void execute(Step step) throws Failure {
        if (step instanceof Step.EnableVfs enable) {
            if (!current.vfs().isEmpty() || current.numVfs() != 0) {
                throw new Failure("card " + pf + " has VFs already (" + current.numVfs()
                        + "), so they are not enabled");
            }
            write(step, () -> writes.writeVfCount(pf, enable.count()));
            CardFacts now = read();
            if (now.numVfs() != enable.count() || now.vfs().size() != enable.count()) {
                throw new Failure("wrote " + enable.count() + " to sriov_numvfs of card " + pf + ", and it reads back "
                        + now.numVfs() + " with " + Profiles.vfs(now.vfs().size()));
            }
        } else if (step instanceof Step.SetType set) {
            VfFacts vf = writable(set.vf());
            if (vf.configured()) {
                throw new Failure("VF " + set.vf() + " holds " + current.types().describe(vf.typeId())
                        + " now, not no vGPU as planned");
            }
            if (!vf.lists(set.typeId())) {
                throw new Failure(ProfileNames.quoted(set.profile()) + " (type " + set.typeId() + ") is not creatable"
                        + " on VF " + set.vf() + " now: card " + pf + " has no room for it beside "
                        + current.describeConfiguration());
            }
            write(step, () -> writes.writeType(set.vf(), set.typeId()));
            readBack(set.vf(), set.typeId());
        } else if (step instanceof Step.ClearType clear) {
            VfFacts vf = writable(clear.vf());
            if (vf.typeId() != clear.previousTypeId()) {
                throw new Failure("VF " + clear.vf() + " holds " + current.types().describe(vf.typeId())
                        + " now, not type " + clear.previousTypeId() + " as planned");
            }
            write(step, () -> writes.writeType(clear.vf(), 0));
            readBack(clear.vf(), 0);
        }
    }

    /** The VF as last read; a failure when it is gone or in use now. */
    private VfFacts writable(PciAddress address) throws Failure {
        if (inUseNow().contains(address)) {
            throw new Failure("VF " + address + " is in use now, so it is not written");
        }
        return current.vf(address).orElseThrow(() -> new Failure("VF " + address + " of card " + pf + " is gone"));
    }

    private void readBack(PciAddress vf, long typeId) throws Failure {
        Optional<VfFacts> now = read().vf(vf);
        if (now.isEmpty() || now.get().typeId() != typeId) {
            throw new Failure("wrote " + typeId + " to nvidia/current_vgpu_type of VF " + vf + ", and it reads back "
                    + now.map(v -> Long.toString(v.typeId())).orElse("nothing (the VF is gone)"));
        }
    }

    @FunctionalInterface
    private interface Write {
        void run() throws IOException;
    }

    private void write(Step step, Write write) throws Failure {
        written++;
        try {
            write.run();
        } catch (IOException | RuntimeException e) {
            throw new Failure("could not " + step.describe() + ": " + message(e));
        }
        done.add(step);
        LOG.info("vGPU configurator: card {}: {}", pf, step.describe());
    }

    // ---- reads ---------------------------------------------------------------------------------------------

    private Set<PciAddress> inUseNow() throws Failure {
        try {
            return Set.copyOf(inUse.vfs());
        } catch (IOException | RuntimeException e) {
            throw new Failure("which VFs are in use cannot be told (" + message(e) + "), so card " + pf
                    + " is not written");
        }
    }

    private CardFacts read() throws Failure {
        Set<PciAddress> used = inUseNow();
        CardFacts facts;
        try {
            facts = reader.readCard(pf, used);
        } catch (NoSuchFileException e) {
            throw new Failure(Kind.UNKNOWN_CARD, "the host has no card " + pf + " that can host vendor-VFIO vGPUs ("
                    + message(e) + ")");
        } catch (IOException | RuntimeException e) {
            throw new Failure("card " + pf + " cannot be read: " + message(e));
        }
        if (!facts.problems().isEmpty()) {
            throw new Failure("card " + pf + " cannot be read whole: " + String.join("; ", facts.problems()));
        }
        // Ids stay what they are during a run, so names read earlier still name them once the card is full.
        typesRead = typesRead == null ? facts.types() : typesRead.merge(facts.types());
        current = facts.withTypes(typesRead);
        return current;
    }

    private static String message(Exception e) {
        return Printable.of(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage(), 240);
    }

    // ---- rollback --------------------------------------------------------------------------------------------

    /**
     * Puts the card back as {@code before} showed it, in up to {@value #ROLLBACK_PASSES} passes (a write that failed
     * once, or did not take, is tried again from a fresh read); empty when that worked exactly, else what the last
     * pass could not do.
     */
    private Optional<List<String>> restore(CardFacts before) {
        List<String> problems = new ArrayList<>();
        for (int pass = 1; pass <= ROLLBACK_PASSES; pass++) {
            problems.clear();
            Rollback rollback = new Rollback(before, problems);
            try {
                rollback.clearOthers(read());
                rollback.restoreTypes(read());
                rollback.disableEnabled(read());
                CardFacts after = read();
                if (after.sameConfiguration(before)) {
                    return Optional.empty();
                }
                problems.add("card " + pf + " holds " + after.describeConfiguration() + ", it held "
                        + before.describeConfiguration());
            } catch (Failure e) {
                problems.add(e.getMessage());
            }
        }
        return Optional.of(problems);
    }

    /** The writes that undo a run, each read back; a VF in use is never written. */
    private final class Rollback {
        private final CardFacts before;
        private final List<String> problems;

        Rollback(CardFacts before, List<String> problems) {
            this.before = before;
            this.problems = problems;
        }

        /** Clears each VF that holds a type it did not hold before. */
        void clearOthers(CardFacts now) throws Failure {
            Set<PciAddress> used = inUseNow();
            for (VfFacts vf : now.vfs()) {
                long was = before.vf(vf.address()).map(VfFacts::typeId).orElse(0L);
                if (vf.configured() && vf.typeId() != was) {
                    undo(vf.address(), 0, used);
                }
            }
        }

        /** Writes back each type a VF held before and holds no more. */
        void restoreTypes(CardFacts now) throws Failure {
            Set<PciAddress> used = inUseNow();
            for (VfFacts was : before.vfs()) {
                Optional<VfFacts> vf = now.vf(was.address());
                if (was.configured() && vf.isPresent() && !vf.get().configured()) {
                    undo(was.address(), was.typeId(), used);
                }
            }
        }

        /** Disables the VFs of a card that had none, unless one of them is in use now. */
        void disableEnabled(CardFacts now) {
            if (before.numVfs() != 0 || now.numVfs() == 0) {
                return;
            }
            List<PciAddress> used = now.vfs().stream().filter(VfFacts::inUse).map(VfFacts::address).toList();
            if (!used.isEmpty()) {
                problems.add("the VFs of card " + pf + " were not disabled again: " + used + " in use now");
                return;
            }
            written++;
            try {
                writes.writeVfCount(pf, 0);
                LOG.info("vGPU configurator: card {}: disabled its VFs again", pf);
            } catch (IOException | RuntimeException e) {
                problems.add("could not disable the VFs of card " + pf + " again: " + message(e));
            }
        }

        private void undo(PciAddress vf, long typeId, Set<PciAddress> used) {
            if (used.contains(vf)) {
                problems.add("VF " + vf + " is in use now, so it was not written back to type " + typeId);
                return;
            }
            written++;
            try {
                writes.writeType(vf, typeId);
                LOG.info("vGPU configurator: card {}: wrote VF {} back to {}", pf, vf, typeId == 0 ? "no vGPU"
                        : before.types().describe(typeId));
            } catch (IOException | RuntimeException e) {
                problems.add("could not write VF " + vf + " back to type " + typeId + ": " + message(e));
            }
        }
    }
}
