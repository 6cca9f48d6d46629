package dev.vgpu.configurator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.DeviceFacts;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The values' checks and helpers: profile names, type tables, facts, demands, steps, outcomes, known names. */
class ValuesTest {

    static final PciAddress PF = PciAddress.parse("0000:41:00.0");
    static final PciAddress OTHER = PciAddress.parse("0000:81:00.0");

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "NVIDIA L40S-4Q       | L40S-4Q         | true",
        "NVIDIA L40S-4Q       | NVIDIA L40S-4Q  | true",
        "NVIDIA  L40S-4Q      | NVIDIA L40S-4Q  | true",
        "NVIDIA RTX Pro 6000 Blackwell DC-1-2Q | RTX Pro 6000 Blackwell  DC-1-2Q | true",
        "NVIDIA L40S-4Q       | L40S-4          | false",
        "NVIDIA L40S-4Q       | nvidia L40S-4Q  | false",
        "GRID T4-1Q           | T4-1Q           | false"})
    void aLayoutNamesAProfileInFullOrWithoutTheVendorWord(String type, String wanted, boolean matches) {
        assertThat(ProfileNames.matches(type, wanted)).isEqualTo(matches);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "NVIDIA L40S-4Q | 4", "L40S-48Q | 48", "NVIDIA H200X-141C | 141", "NVIDIA H200X-1-18C | 18",
        "NVIDIA RTX Pro 6000 Blackwell DC-1-2Q | 2", "NVIDIA X-small | -1", "NVIDIA X-4 | -1", "NVIDIA X-0Q | -1",
        "NVIDIA X-4Q2 | -1", "NVIDIA L40S | -1", "NVIDIA X-1234567Q | -1"})
    void theFramebufferSizeIsTheNumberBeforeTheSeriesLetters(String name, int size) {
        assertThat(ProfileNames.framebufferGb(name)).isEqualTo(size < 0 ? OptionalInt.empty() : OptionalInt.of(size));
    }

    @Test
    void typeTablesJoinAndMarkConflictsAmbiguous() {
        CardTypes catalogs = new CardTypes(Map.of(1L, "NVIDIA X-4Q", 2L, "NVIDIA X-8Q"), Set.of(), true);
        CardTypes resolver = new CardTypes(Map.of(2L, "NVIDIA  X-8Q", 3L, "NVIDIA X-16Q", 1L, "NVIDIA Y-4Q"), Set.of(),
                false);

        CardTypes joined = catalogs.merge(resolver);

        assertThat(joined.names()).isEqualTo(Map.of(2L, "NVIDIA X-8Q", 3L, "NVIDIA X-16Q"));
        assertThat(joined.ambiguous()).containsExactly(1L);
        assertThat(joined.complete()).isTrue();
        assertThat(joined.framebufferGb()).hasValue(16);
        assertThat(joined.idsOf("X-16Q")).containsExactly(3L);
        assertThat(joined.describe(1)).isEqualTo("type 1");
        assertThat(resolver.framebufferGb()).isEmpty();
        assertThatThrownBy(() -> new CardTypes(Map.of(1L, "x"), Set.of(1L), false)).hasMessageContaining("both");
        assertThatThrownBy(() -> new CardTypes(Map.of(1L, " "), Set.of(), false)).hasMessageContaining("a name");
    }

    @Test
    void factsAreCheckedAndSorted() {
        VfFacts high = new VfFacts(PciAddress.parse("0000:41:00.5"), 1, 0, Map.of(), false);
        VfFacts low = new VfFacts(PciAddress.parse("0000:41:00.4"), 0, 7, Map.of(), true);

        CardFacts card = new CardFacts(PF, 0x26b9, 2, 2, List.of(high, low), CardTypes.NONE, List.of());

        assertThat(card.vfs()).containsExactly(low, high);
        assertThat(card.deviceVendorId()).isEqualTo(0x26b910deL);
        assertThat(card.vgpuCounts()).isEqualTo(Map.of(7L, 1));
        assertThat(card.describeConfiguration()).isEqualTo("2 VFs: 1 × type 7, 1 without a vGPU");
        assertThat(card.withInUse(Set.of(high.address())).vfs()).extracting(VfFacts::inUse).containsExactly(false,
                true);
        assertThat(low.free()).isFalse();
        assertThat(high.free()).isTrue();
        assertThatThrownBy(() -> new CardFacts(PF, 0x26b9, 2, 2, List.of(low, low), CardTypes.NONE, List.of()))
                .hasMessageContaining("twice");
        assertThatThrownBy(() -> new CardFacts(PF, 0x1ffff, 2, 2, List.of(), CardTypes.NONE, List.of()))
                .hasMessageContaining("16 bits");
        assertThatThrownBy(() -> new VfFacts(PF, -1, 0, Map.of(), false)).hasMessageContaining("non-negative");
        assertThatThrownBy(() -> new HostFacts(List.of(card, card))).hasMessageContaining("listed twice");
    }

    @Test
    void demandsAreChecked() {
        assertThatThrownBy(() -> CardDemand.layout(Map.of("L40S-4Q", -1))).hasMessageContaining("0 or more");
        assertThatThrownBy(() -> CardDemand.layout(Map.of(" ", 1))).hasMessageContaining("blank");
        assertThatThrownBy(() -> CardDemand.acquire("L40S-4Q", 0)).hasMessageContaining("at least one");
        assertThatThrownBy(() -> new CardDemand.Release(Set.of())).hasMessageContaining("at least one");
        assertThat(CardDemand.layout(Map.of("b", 1, "a", 2)).counts().keySet()).containsExactly("a", "b");
        assertThat(CardDemand.layout(Map.of("L40S-4Q", 2, "L40S-4A", 0)).describe()).isEqualTo("2 × \"L40S-4Q\"");
        assertThat(CardDemand.layout(Map.of()).describe()).isEqualTo("no vGPUs");
        assertThatThrownBy(() -> new Step.SetType(PF, 0, "x")).hasMessageContaining("at least 1");
        assertThatThrownBy(() -> new CardPlan(PF, List.of(), true)).hasMessageContaining("has a step");
        assertThatThrownBy(() -> new CardRefusal(PF, List.of())).hasMessageContaining("needs a reason");
    }

    @Test
    void outcomesSayWhatHappenedAsWordsAndAsAMetricLabel() {
        List<CardOutcome> outcomes = List.of(new CardOutcome.Applied(PF, List.of(new Step.EnableVfs(PF, 4))),
                new CardOutcome.Unchanged(PF),
                new CardOutcome.Refused(PF, List.of(new CardRefusal.Reason(CardRefusal.Kind.NO_VFS, "no VFs")), 0),
                new CardOutcome.RolledBack(PF, "a write failed", 3),
                new CardOutcome.RollbackFailed(PF, "a write failed", List.of("VF stuck"), 5));

        assertThat(outcomes).extracting(CardOutcome::result).containsExactly("applied", "unchanged", "refused",
                "rolled_back", "rollback_failed");
        assertThat(outcomes).extracting(CardOutcome::matches).containsExactly(true, true, false, false, false);
        assertThat(outcomes).extracting(CardOutcome::writes).containsExactly(1, 0, 0, 3, 5);
        assertThat(outcomes).allSatisfy(outcome -> assertThat(outcome.describe()).startsWith("card 0000:41:00.0: "));
        ApplyReport report = new ApplyReport(List.of(new CardOutcome.Unchanged(OTHER), outcomes.get(0)), Map.of());
        assertThat(report.cards()).extracting(CardOutcome::card).containsExactly(PF, OTHER);
        assertThat(report.hostMatches()).isTrue();
        assertThat(report.writes()).isOne();
    }

    @Test
    void knownNamesNeverCrossCards() {
        VgpuTypeResolver read = KnownTypeNames.of(Map.of(PF, new CardTypes(Map.of(1150L, "NVIDIA L40S-4Q"), Set.of(),
                false)));

        assertThat(read.supportedTypes(PF)).isEqualTo(VgpuTypeNames.of(Map.of(1150L, "NVIDIA L40S-4Q")));
        assertThat(read.supportedTypes(OTHER)).isInstanceOf(VgpuTypeNames.Unavailable.class);
    }

    @Test
    void discoveredDevicesNameTheTypesTheyHoldOnTheirOwnCard() {
        Device a = vf("0000:41:00.4", PF, 1150, "NVIDIA L40S-4Q");
        Device b = vf("0000:81:00.4", OTHER, 1150, "NVIDIA L40S-4A");
        Device conflict = vf("0000:81:00.5", OTHER, 1153, "NVIDIA L40S-12Q");
        Device conflicting = vf("0000:81:00.6", OTHER, 1153, "NVIDIA L40S-12A");
        Device unnamed = new Device("0000:41:00.5", new ResourceName("X"), "vendor-vfio",
                Attachment.VFIO_PCI, Optional.of(PF), Optional.empty(), OptionalInt.empty(), Optional.empty(),
                Optional.empty());

        VgpuTypeResolver names = KnownTypeNames.fromDevices(List.of(a, b, conflict, conflicting, unnamed));

        assertThat(names.supportedTypes(PF).name(1150)).hasValue("NVIDIA L40S-4Q");
        assertThat(names.supportedTypes(OTHER).name(1150)).hasValue("NVIDIA L40S-4A");
        assertThat(names.supportedTypes(OTHER).name(1153)).isEmpty();
    }

    @Test
    void aUnionJoinsAnswersEarlierFirstAndOtherwiseSaysWhy() {
        VgpuTypeResolver nvml = pf -> VgpuTypeNames.of(Map.of(1L, "NVIDIA X-4Q"));
        VgpuTypeResolver learned = pf -> VgpuTypeNames.of(Map.of(1L, "NVIDIA Y-4Q", 2L, "NVIDIA X-8Q"));
        VgpuTypeResolver broken = pf -> VgpuTypeNames.failed("GPU_IS_LOST");

        assertThat(KnownTypeNames.union(nvml, learned).supportedTypes(PF))
                .isEqualTo(VgpuTypeNames.of(Map.of(1L, "NVIDIA X-4Q", 2L, "NVIDIA X-8Q")));
        assertThat(KnownTypeNames.union(VgpuTypeResolver.none(), broken).supportedTypes(PF))
                .isEqualTo(VgpuTypeNames.failed("GPU_IS_LOST"));
        assertThat(KnownTypeNames.union(VgpuTypeResolver.none(), pf -> {
            throw new IllegalStateException("boom");
        }).supportedTypes(PF)).isInstanceOf(VgpuTypeNames.Failed.class);
        assertThat(KnownTypeNames.union(VgpuTypeResolver.none()).supportedTypes(PF))
                .isEqualTo(VgpuTypeNames.unavailable("no vGPU type resolver configured (NVML not in use)"));
    }

    private static Device vf(String id, PciAddress card, long type, String profile) {
        return Device.builder(id, ResourceName.forVgpuProfile(profile).orElseThrow(), "vendor-vfio",
                Attachment.VFIO_PCI).parent(card).facts(DeviceFacts.NONE.withProfile(profile).withVgpuTypeId(type))
                .build();
    }
}
