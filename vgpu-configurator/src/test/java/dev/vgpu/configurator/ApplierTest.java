package dev.vgpu.configurator;

import static dev.vgpu.configurator.SimulatedHost.at;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.configurator.sysfs.SysfsVgpuHost;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.testing.SimulatedCard;
import dev.vgpu.testing.VgpuManagerSimulator.WriteFault;
import dev.vgpu.testsupport.CapturedStderr;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The applier against the vGPU-manager simulator: writes, read-backs, refusals and rollbacks. */
class ApplierTest {

    static final String A = "0000:41:00.0";
    static final String B = "0000:81:00.0";
    static final String A0 = "0000:41:00.4";
    static final String A1 = "0000:41:00.5";
    static final String A2 = "0000:41:00.6";
    static final String A3 = "0000:41:00.7";
    static final long Q12 = 1153;
    static final long A12 = 1163;
    static final long Q24 = 1155;
    static final long Q4 = 1150;

    @TempDir
    Path dir;

    /** Card A: 4 VFs enabled; card B: 4 VFs, none enabled, no PF catalog. */
    SimulatedHost twoCards(Path root) {
        return new SimulatedHost(root, SimulatedCard.l40s(A).withTotalVfs(4),
                SimulatedCard.l40s(B).withTotalVfs(4).withEnabledVfs(0).withCatalogOnPf(false));
    }

    static Map<PciAddress, CardDemand> layouts(String a, int countA, String b, int countB) {
        return Map.of(at(A), CardDemand.layout(Map.of(a, countA)), at(B), CardDemand.layout(Map.of(b, countB)));
    }

    @Test
    void appliesATwoCardLayoutFromNothingAndASecondRunWritesNothing() {
        SimulatedHost host = twoCards(dir);
        Map<PciAddress, CardDemand> layout = layouts("L40S-12Q", 2, "NVIDIA L40S-4Q", 3);

        ApplyReport first = host.applier().apply(layout, InUse.none());

        assertThat(first.hostMatches()).isTrue();
        assertThat(first.cards()).allMatch(outcome -> outcome instanceof CardOutcome.Applied);
        assertThat(host.vgpus(A)).isEqualTo(Map.of(A0, Q12, A1, Q12, A2, 0L, A3, 0L));
        assertThat(host.simulator.vfCount(B)).isEqualTo(4);
        assertThat(host.vgpus(B).values()).containsExactly(Q4, Q4, Q4, 0L);
        assertThat(first.writes()).isEqualTo(2 + 1 + 3).isEqualTo(host.simulator.writeAttempts());
        assertThat(((CardOutcome.Applied) first.cards().get(1)).steps().get(0))
                .isEqualTo(new Step.EnableVfs(at(B), 4));

        ApplyReport second = host.applier().apply(layout, InUse.none());

        assertThat(second.cards()).allMatch(outcome -> outcome instanceof CardOutcome.Unchanged);
        assertThat(second.writes()).isZero();
        assertThat(host.simulator.writeAttempts()).isEqualTo(6);
    }

    @Test
    void aFullCardIsNamedOnTheSecondRunByTheNamesTheFirstRead() {
        SimulatedHost host = twoCards(dir);
        Map<PciAddress, CardDemand> full = layouts("L40S-24Q", 2, "L40S-12Q", 4);
        ApplyReport first = host.applier().apply(full, InUse.none());
        assertThat(first.hostMatches()).isTrue();

        ApplyReport unnamed = host.applier().apply(full, InUse.none());
        ApplyReport named = host.applier(first.typeNames()).apply(full, InUse.none());

        assertThat(unnamed.cards()).allSatisfy(outcome -> assertThat(((CardOutcome.Refused) outcome).has(
                CardRefusal.Kind.UNLISTED_PROFILE)).isTrue());
        assertThat(unnamed.cards().get(0).describe()).contains("nothing names the types its VFs hold (type 1155 on 2"
                + " VFs)");
        assertThat(named.cards()).allMatch(outcome -> outcome instanceof CardOutcome.Unchanged);
        assertThat(host.simulator.writeAttempts()).isEqualTo(first.writes());
    }

    @Test
    void aVfInUseIsLeftAloneAndItsCardRefusedWhileTheOtherCardIsApplied() throws IOException {
        SimulatedHost host = twoCards(dir);
        host.simulator.writeType(at(A1), Q12);
        host.simulator.hold(A1);
        long before = host.simulator.writeAttempts();

        ApplyReport report = host.applier().apply(layouts("L40S-24Q", 1, "L40S-4Q", 1), InUse.of(Set.of(at(A1))));

        CardOutcome.Refused refused = (CardOutcome.Refused) report.cards().get(0);
        assertThat(refused.has(CardRefusal.Kind.VF_IN_USE)).isTrue();
        assertThat(refused.describe()).contains("VF 0000:41:00.5 is in use and holds \"NVIDIA L40S-12Q\" (type 1153)");
        assertThat(refused.writes()).isZero();
        assertThat(report.cards().get(1)).isInstanceOf(CardOutcome.Applied.class);
        assertThat(report.hostMatches()).isFalse();
        assertThat(host.vgpus(A)).containsEntry(A1, Q12).containsEntry(A0, 0L);
        assertThat(host.simulator.writeAttempts()).isEqualTo(before + 2);
    }

    @ParameterizedTest
    @EnumSource(WriteFault.class)
    void aFaultAtEachStepRollsTheCardBackExactly(WriteFault fault) throws IOException {
        // clear A0, clear A1, set A0, set A1, set A2: five writes
        CardDemand demand = CardDemand.layout(Map.of("L40S-12A", 3));
        for (int step = 1; step <= 5; step++) {
            SimulatedHost host = new SimulatedHost(dir.resolve(fault + "-" + step), SimulatedCard.l40s(A)
                    .withTotalVfs(4));
            host.simulator.writeType(at(A0), Q12);
            host.simulator.writeType(at(A1), Q12);
            Map<String, Long> before = host.vgpus(A);
            host.simulator.failWrite(step, fault);

            CardOutcome outcome = host.applier().apply(at(A), demand, InUse.none());

            assertThat(outcome).as("fault %s at write %d", fault, step).isInstanceOf(CardOutcome.RolledBack.class);
            assertThat(host.vgpus(A)).as("fault at write %d", step).isEqualTo(before);
            assertThat(outcome.describe()).contains(fault == WriteFault.FAIL ? "Input/output error" : "reads back");
        }
    }

    @Test
    void aFaultAtEachStepFromNothingDisablesTheVfsAgain() {
        CardDemand demand = CardDemand.layout(Map.of("L40S-24Q", 2));
        for (int step = 1; step <= 3; step++) {
            SimulatedHost host = new SimulatedHost(dir.resolve("nothing-" + step), SimulatedCard.l40s(A)
                    .withTotalVfs(4).withEnabledVfs(0));
            host.simulator.failWrite(step, WriteFault.FAIL);

            CardOutcome outcome = host.applier().apply(at(A), demand, InUse.none());

            assertThat(outcome).as("fault at write %d", step).isInstanceOf(CardOutcome.RolledBack.class);
            assertThat(host.simulator.vfCount(A)).isZero();
            assertThat(host.simulator.tree().virtualFunctions(A)).isEmpty();
        }
    }

    @Test
    void aRollbackThatCannotWriteIsLoud() {
        SimulatedHost host = new SimulatedHost(dir, SimulatedCard.l40s(A).withTotalVfs(4));
        host.simulator.failWritesFrom(2);

        CapturedStderr.Outcome<CardOutcome> run = CapturedStderr.withAnswer(() -> host.applier()
                .apply(at(A), CardDemand.layout(Map.of("L40S-12Q", 3)), InUse.none()));

        assertThat(run.answer()).isInstanceOf(CardOutcome.RollbackFailed.class);
        assertThat(run.answer().result()).isEqualTo("rollback_failed");
        assertThat(run.answer().describe()).contains("FAILED AND NOT ROLLED BACK", "could not write VF 0000:41:00.4"
                + " back to type 0");
        assertThat(run.log()).contains("ERROR", "FAILED AND NOT ROLLED BACK");
        assertThat(host.vgpus(A)).containsEntry(A0, Q12);
    }

    @Test
    void aRebootIsUndoneByApplyingTheLayoutAgain() {
        SimulatedHost host = twoCards(dir);
        Map<PciAddress, CardDemand> layout = layouts("L40S-12Q", 3, "L40S-24Q", 1);
        host.applier().apply(layout, InUse.none());
        Map<String, Long> applied = host.vgpus(A);

        host.simulator.reboot();
        ApplyReport restored = host.applier().apply(layout, InUse.none());

        assertThat(restored.cards()).allMatch(outcome -> outcome instanceof CardOutcome.Applied);
        assertThat(host.vgpus(A)).isEqualTo(applied);
        assertThat(host.vgpus(B).values()).containsExactly(Q24, 0L, 0L, 0L);

        host.simulator.rebootKeepingVfs();
        assertThat(host.applier().apply(layout, InUse.none()).hostMatches()).isTrue();
        assertThat(host.vgpus(A)).isEqualTo(applied);
    }

    @Test
    void aVfTakenWhileTheCardIsWrittenStopsTheRunAndIsNotWritten() {
        SimulatedHost host = new SimulatedHost(dir, SimulatedCard.l40s(A).withTotalVfs(4));
        AtomicInteger asked = new AtomicInteger();
        InUse takenLater = () -> asked.incrementAndGet() > 2 ? Set.of(at(A2)) : Set.of();

        CardOutcome outcome = host.applier().apply(at(A), CardDemand.layout(Map.of("L40S-12Q", 4)), takenLater);

        assertThat(outcome).isInstanceOf(CardOutcome.RolledBack.class);
        assertThat(outcome.describe()).contains("VF 0000:41:00.6 is in use now");
        assertThat(host.vgpus(A).values()).containsOnly(0L);
    }

    @Test
    void aLayoutTheCardRefusesOnceItsVfsAreEnabledDisablesThemAgain() {
        SimulatedHost host = twoCards(dir);

        CardOutcome outcome = host.applier().apply(at(B), CardDemand.layout(Map.of("L40S-5Q", 1)), InUse.none());

        assertThat(outcome).isInstanceOf(CardOutcome.Refused.class);
        assertThat(((CardOutcome.Refused) outcome).has(CardRefusal.Kind.UNKNOWN_PROFILE)).isTrue();
        assertThat(outcome.describe()).contains("card 0000:81:00.0 has no vGPU profile \"L40S-5Q\"");
        assertThat(outcome.writes()).isEqualTo(2);
        assertThat(host.simulator.vfCount(B)).isZero();
    }

    @Test
    void aCardTheHostLacksOrAnInUseListThatCannotBeReadIsRefusedWithoutAWrite() {
        SimulatedHost host = twoCards(dir);

        CardOutcome missing = host.applier().apply(at("0000:c1:00.0"), CardDemand.layout(Map.of()), InUse.none());
        CardOutcome blind = host.applier().apply(at(A), CardDemand.layout(Map.of("L40S-12Q", 1)), () -> {
            throw new IOException("kubelet_internal_checkpoint: Permission denied");
        });

        assertThat(((CardOutcome.Refused) missing).has(CardRefusal.Kind.UNKNOWN_CARD)).isTrue();
        assertThat(((CardOutcome.Refused) blind).has(CardRefusal.Kind.UNREADABLE)).isTrue();
        assertThat(blind.describe()).contains("which VFs are in use cannot be told (kubelet_internal_checkpoint:"
                + " Permission denied)");
        assertThat(host.simulator.writeAttempts()).isZero();
    }

    @Test
    void oneVfIsAcquiredAndGivenBack() {
        SimulatedHost host = new SimulatedHost(dir, SimulatedCard.l40s(A).withTotalVfs(4));
        host.applier().apply(at(A), CardDemand.layout(Map.of("L40S-12Q", 1)), InUse.none());

        CardOutcome.Applied acquired = (CardOutcome.Applied) host.applier().apply(at(A),
                CardDemand.acquire("L40S-12Q", 1), InUse.of(Set.of(at(A0))));
        PciAddress vf = ((Step.SetType) acquired.steps().get(0)).vf();
        CardOutcome released = host.applier().apply(at(A), CardDemand.release(vf), InUse.of(Set.of(at(A0))));

        assertThat(vf).isEqualTo(at(A1));
        assertThat(released).isInstanceOf(CardOutcome.Applied.class);
        assertThat(host.vgpus(A)).containsEntry(A0, Q12).containsEntry(A1, 0L);
    }

    @Test
    void everyWriteIsLoggedInWords() {
        SimulatedHost host = new SimulatedHost(dir, SimulatedCard.l40s(A).withTotalVfs(2));

        String log = CapturedStderr.of(() -> host.applier().apply(Map.of(at(A), CardDemand.layout(Map.of(
                "L40S-24Q", 2))), InUse.none()));

        assertThat(log).contains("card 0000:41:00.0 (2 VFs: 2 without a vGPU): applying 2 × \"L40S-24Q\"",
                "card 0000:41:00.0: set VF 0000:41:00.4 to \"NVIDIA L40S-24Q\" (type 1155)",
                "card 0000:41:00.0 now holds 2 VFs: 2 × \"NVIDIA L40S-24Q\" (type 1155) (2 writes)");
    }

    @Test
    void aTypeTheCardNoLongerListsFailsBeforeItIsWritten() {
        SimulatedHost host = new SimulatedHost(dir, SimulatedCard.l40s(A).withTotalVfs(4));
        HostReader reader = SysfsVgpuHost.at(host.root, VgpuTypeResolver.none());
        // A reader that claims more room than the card has: the plan asks for a third 24Q, the driver lists none.
        HostReader optimist = new HostReader() {
            @Override
            public HostFacts read(Set<PciAddress> inUse) throws IOException {
                return reader.read(inUse);
            }

            @Override
            public CardFacts readCard(PciAddress pf, Set<PciAddress> inUse) throws IOException {
                CardFacts card = reader.readCard(pf, inUse);
                return new CardFacts(card.pf(), card.deviceId(), card.totalVfs(), card.numVfs(), card.vfs(),
                        new CardTypes(card.types().names(), Set.of(), false), card.problems());
            }
        };

        CardOutcome outcome = new Applier(optimist, host.writes()).apply(at(A),
                CardDemand.layout(Map.of("L40S-24Q", 3)), InUse.none());

        assertThat(outcome).isInstanceOf(CardOutcome.RolledBack.class);
        assertThat(outcome.describe()).contains("\"NVIDIA L40S-24Q\" (type 1155) is not creatable on VF 0000:41:00.6"
                + " now");
        assertThat(host.simulator.writeAttempts()).isEqualTo(4);
        assertThat(host.vgpus(A).values()).containsOnly(0L);
    }
}
