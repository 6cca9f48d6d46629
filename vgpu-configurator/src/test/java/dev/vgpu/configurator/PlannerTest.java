package dev.vgpu.configurator;

import static dev.vgpu.configurator.CardRefusal.Kind.AMBIGUOUS_PROFILE;
import static dev.vgpu.configurator.CardRefusal.Kind.INVALID_DEMAND;
import static dev.vgpu.configurator.CardRefusal.Kind.MIXED_SIZES;
import static dev.vgpu.configurator.CardRefusal.Kind.NO_VFS;
import static dev.vgpu.configurator.CardRefusal.Kind.OVER_CAPACITY;
import static dev.vgpu.configurator.CardRefusal.Kind.UNKNOWN_CARD;
import static dev.vgpu.configurator.CardRefusal.Kind.UNKNOWN_PROFILE;
import static dev.vgpu.configurator.CardRefusal.Kind.UNLISTED_PROFILE;
import static dev.vgpu.configurator.CardRefusal.Kind.UNREADABLE;
import static dev.vgpu.configurator.CardRefusal.Kind.VF_IN_USE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.PciAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The planner as a table: a card, a demand, and the steps (written short: {@code set 0 1153} sets VF 0 to type 1153,
 * {@code clear 2}, {@code enable 16}, {@code read again}) or the refusal's kind and words it must contain.
 */
class PlannerTest {

    static final long Q1 = 1147;
    static final long Q4 = 1150;
    static final long Q12 = 1153;
    static final long A12 = 1163;
    static final long Q24 = 1155;

    static Arguments plans(String name, TestCard card, CardDemand demand, String... steps) {
        return Arguments.of(name, card, demand, List.of(steps));
    }

    static Map<String, Integer> of(String profile, int count) {
        return Map.of(profile, count);
    }

    static Stream<Arguments> plansThatWrite() {
        return Stream.of(
                plans("a short name on free VFs: lowest addresses first", TestCard.withVfs(4),
                        CardDemand.layout(of("L40S-12Q", 4)), "set 0 1153", "set 1 1153", "set 2 1153", "set 3 1153"),
                plans("a full name", TestCard.withVfs(4), CardDemand.layout(of("NVIDIA L40S-12Q", 2)),
                        "set 0 1153", "set 1 1153"),
                plans("a card that matches needs nothing", TestCard.withVfs(4).holding(0, Q12).holding(1, Q12),
                        CardDemand.layout(of("L40S-12Q", 2))),
                plans("a VF already holding the type is kept", TestCard.withVfs(4).holding(2, Q12),
                        CardDemand.layout(of("L40S-12Q", 2)), "set 0 1153"),
                plans("surplus vGPUs are cleared from the highest addresses",
                        TestCard.withVfs(4).holding(0, Q12).holding(1, Q12).holding(2, Q12),
                        CardDemand.layout(of("L40S-12Q", 1)), "clear 1", "clear 2"),
                plans("another type of the same size: clear, then set", TestCard.withVfs(4).holding(0, Q12),
                        CardDemand.layout(of("L40S-12A", 2)), "clear 0", "set 0 1163", "set 1 1163"),
                plans("two series of one size", TestCard.withVfs(4),
                        CardDemand.layout(Map.of("L40S-12Q", 1, "L40S-12A", 1)), "set 0 1153", "set 1 1163"),
                plans("a VF in use holding a wanted type counts toward the layout",
                        TestCard.withVfs(4).holding(1, Q12).inUse(1), CardDemand.layout(of("L40S-12Q", 2)),
                        "set 0 1153"),
                plans("a VF in use and free is left out", TestCard.withVfs(4).inUse(0),
                        CardDemand.layout(of("L40S-12Q", 2)), "set 1 1153", "set 2 1153"),
                plans("the empty layout clears every vGPU not in use",
                        TestCard.withVfs(4).holding(0, Q12).holding(3, Q12), CardDemand.layout(Map.of()),
                        "clear 0", "clear 3"),
                plans("a count of 0 asks for nothing", TestCard.withVfs(2).holding(0, Q12),
                        CardDemand.layout(of("L40S-12Q", 0)), "clear 0"),
                plans("no VFs: enable them all, then read again", TestCard.withoutVfs(16),
                        CardDemand.layout(of("L40S-12Q", 4)), "enable 16", "read again"),
                plans("no VFs and nothing listed: the names are checked once enabled",
                        TestCard.withoutVfs(16).listingNothing(), CardDemand.layout(of("L40S-99Q", 1)), "enable 16",
                        "read again"),
                plans("no VFs and no vGPU asked: nothing", TestCard.withoutVfs(16), CardDemand.layout(Map.of())),
                plans("acquire beside what the card holds", TestCard.withVfs(4).holding(0, Q12).inUse(1),
                        CardDemand.acquire("L40S-12Q", 2), "set 2 1153", "set 3 1153"),
                plans("acquire on a card without VFs enables them", TestCard.withoutVfs(8),
                        CardDemand.acquire("L40S-4Q", 1), "enable 8", "read again"),
                plans("release clears what the VFs hold, free ones need nothing", TestCard.withVfs(4).holding(0, Q12),
                        CardDemand.release(TestCard.vf(0), TestCard.vf(1)), "clear 0"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void plansThatWrite(String name, TestCard card, CardDemand demand, List<String> expected) {
        CardDecision decision = Planner.plan(card.build(), demand);

        assertThat(decision).isInstanceOf(CardPlan.class);
        assertThat(shortly((CardPlan) decision)).containsExactlyElementsOf(expected);
    }

    static Arguments refuses(String name, TestCard card, CardDemand demand, CardRefusal.Kind kind, String words) {
        return Arguments.of(name, card, demand, kind, words);
    }

    static Stream<Arguments> refusals() {
        return Stream.of(
                refuses("an unknown profile, naming card and profile", TestCard.withVfs(4),
                        CardDemand.layout(of("L40S-5Q", 1)), UNKNOWN_PROFILE,
                        "card 0000:41:00.0 has no vGPU profile \"L40S-5Q\"; it names \"NVIDIA L40S-1Q\","
                                + " \"NVIDIA L40S-4Q\""),
                refuses("a profile name is escaped in the words", TestCard.withVfs(4),
                        CardDemand.layout(of("L40S\nforged", 1)), UNKNOWN_PROFILE, "\"L40S\\nforged\""),
                refuses("an unknown profile with count 0", TestCard.withVfs(4), CardDemand.layout(of("L40S-5Q", 0)),
                        UNKNOWN_PROFILE, "\"L40S-5Q\""),
                refuses("a type of another size is not listed beside the vGPUs a card holds",
                        TestCard.withVfs(4).holding(0, Q4), CardDemand.layout(of("L40S-12Q", 1)), UNLISTED_PROFILE,
                        "while it holds vGPUs it lists only the types that fit beside them"),
                refuses("a full card whose types nothing names",
                        TestCard.withVfs(2).holding(0, Q24).holding(1, Q24).listingNothing(),
                        CardDemand.layout(of("L40S-24Q", 2)), UNLISTED_PROFILE,
                        "nothing names the types its VFs hold (type 1155 on 2 VFs)"),
                refuses("mixed framebuffer sizes", TestCard.withVfs(4),
                        CardDemand.layout(Map.of("L40S-4Q", 2, "L40S-12Q", 1)), MIXED_SIZES,
                        "(4 GB: \"NVIDIA L40S-4Q\"; 12 GB: \"NVIDIA L40S-12Q\")"),
                refuses("mixed sizes are refused before VFs are enabled", TestCard.withoutVfs(8).listingNothing(),
                        CardDemand.layout(Map.of("L40S-4Q", 1, "L40S-12Q", 1)), MIXED_SIZES, "4 GB: \"L40S-4Q\""),
                refuses("a size that cannot be read beside another profile",
                        TestCard.withVfs(4).types(Map.of(1L, "NVIDIA X-small", 2L, "NVIDIA X-4Q")),
                        CardDemand.layout(Map.of("X-small", 1, "X-4Q", 1)), MIXED_SIZES,
                        "\"NVIDIA X-small\" cannot be read from the name"),
                refuses("a VF in use holding a type the layout drops", TestCard.withVfs(4).holding(2, Q12).inUse(2),
                        CardDemand.layout(of("L40S-12A", 1)), VF_IN_USE,
                        "VF 0000:41:00.6 is in use and holds \"NVIDIA L40S-12Q\" (type 1153), which the layout does"
                                + " not keep"),
                refuses("more VFs in use hold a type than the layout keeps",
                        TestCard.withVfs(4).holding(0, Q12).holding(1, Q12).inUse(0, 1),
                        CardDemand.layout(of("L40S-12Q", 1)), VF_IN_USE,
                        "VFs 0000:41:00.4, 0000:41:00.5 are in use and hold \"NVIDIA L40S-12Q\", and the layout keeps"
                                + " only 1"),
                refuses("VFs in use leave too few", TestCard.withVfs(4).inUse(0, 1, 2),
                        CardDemand.layout(of("L40S-12Q", 2)), VF_IN_USE,
                        "it has 4 VFs, and VFs 0000:41:00.4, 0000:41:00.5, 0000:41:00.6 are in use"),
                refuses("more vGPUs than VFs", TestCard.withVfs(4), CardDemand.layout(of("L40S-1Q", 5)),
                        OVER_CAPACITY, "asks card 0000:41:00.0 for 5 vGPUs, and it has 4 VFs"),
                refuses("more framebuffer than the card", TestCard.withVfs(4), CardDemand.layout(of("L40S-24Q", 3)),
                        OVER_CAPACITY, "needs 72 GB of framebuffer, and card 0000:41:00.0 has 48 GB"),
                refuses("more vGPUs than the card can enable", TestCard.withoutVfs(4),
                        CardDemand.layout(of("L40S-1Q", 5)), OVER_CAPACITY, "it can have at most 4 VFs"),
                refuses("no VFs and none possible", TestCard.withoutVfs(0), CardDemand.layout(of("L40S-1Q", 1)),
                        NO_VFS, "sriov_totalvfs is 0"),
                refuses("a card with problems", TestCard.withVfs(2).problem("VF 0000:41:00.5: unreadable"),
                        CardDemand.layout(Map.of()), UNREADABLE, "card 0000:41:00.0: VF 0000:41:00.5: unreadable"),
                refuses("one profile named twice", TestCard.withVfs(4),
                        CardDemand.layout(Map.of("L40S-12Q", 1, "NVIDIA L40S-12Q", 1)), INVALID_DEMAND,
                        "names \"NVIDIA L40S-12Q\" twice"),
                refuses("a name two types share", TestCard.withVfs(4).types(Map.of(1L, "NVIDIA X-4Q", 2L,
                        "NVIDIA  X-4Q")), CardDemand.layout(of("X-4Q", 1)), AMBIGUOUS_PROFILE,
                        "by several types ([1, 2])"),
                refuses("acquire another size", TestCard.withVfs(4).holding(0, Q12).alsoNamed(Map.of(Q4,
                        "NVIDIA L40S-4Q")), CardDemand.acquire("L40S-4Q", 1), MIXED_SIZES, "12 GB"),
                refuses("acquire more than the free VFs", TestCard.withVfs(2).holding(0, Q12),
                        CardDemand.acquire("L40S-12Q", 2), OVER_CAPACITY, "has 1 VF free (of 2: 0 in use, 1 holding"),
                refuses("acquire on a full card", TestCard.withVfs(4).holding(0, Q24).holding(1, Q24).listingNothing()
                        .alsoNamed(Map.of(Q24, "NVIDIA L40S-24Q")), CardDemand.acquire("L40S-24Q", 1), OVER_CAPACITY,
                        "has no room for \"NVIDIA L40S-24Q\" now"),
                refuses("release a VF in use", TestCard.withVfs(2).holding(0, Q12).inUse(0),
                        CardDemand.release(TestCard.vf(0)), VF_IN_USE,
                        "VF 0000:41:00.4 of card 0000:41:00.0 is in use"),
                refuses("release another card's VF", TestCard.withVfs(2),
                        CardDemand.release(PciAddress.parse("0000:81:00.4")), INVALID_DEMAND,
                        "0000:81:00.4 is not a VF of card 0000:41:00.0"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void refusals(String name, TestCard card, CardDemand demand, CardRefusal.Kind kind, String words) {
        CardDecision decision = Planner.plan(card.build(), demand);

        assertThat(decision).isInstanceOf(CardRefusal.class);
        CardRefusal refusal = (CardRefusal) decision;
        assertThat(refusal.has(kind)).as(refusal.describe()).isTrue();
        assertThat(refusal.describe()).contains(words);
    }

    @Test
    void aHostPlanCoversTheCardsAskedForAndRefusesOnesItDoesNotHave() {
        CardFacts card = TestCard.withVfs(2).build();
        PciAddress other = PciAddress.parse("0000:81:00.0");

        Map<PciAddress, CardDecision> decisions = Planner.plan(new HostFacts(List.of(card)),
                Map.of(card.pf(), CardDemand.layout(of("L40S-12Q", 1)), other, CardDemand.layout(Map.of())));

        assertThat(decisions).containsOnlyKeys(card.pf(), other);
        assertThat(decisions.get(card.pf())).isInstanceOf(CardPlan.class);
        assertThat(((CardRefusal) decisions.get(other)).has(UNKNOWN_CARD)).isTrue();
    }

    @Test
    void aPlanSaysItsStepsInWords() {
        CardPlan plan = (CardPlan) Planner.plan(TestCard.withVfs(2).holding(1, Q4).build(),
                CardDemand.layout(of("L40S-4Q", 0)));
        CardPlan enable = (CardPlan) Planner.plan(TestCard.withoutVfs(2).build(), CardDemand.layout(of("L40S-4Q", 1)));

        assertThat(plan.describe()).containsExactly("clear VF 0000:41:00.5 (it holds \"NVIDIA L40S-4Q\" (type 1150))");
        assertThat(enable.describe()).containsExactly("enable 2 VFs on card 0000:41:00.0", "then read card"
                + " 0000:41:00.0 again (its VFs and their types exist only once enabled) and plan the rest");
    }

    @Test
    void planningIsAFunctionOfItsInputs() {
        CardFacts card = TestCard.withVfs(8).holding(3, Q12).holding(5, A12).inUse(5).build();
        CardDemand demand = CardDemand.layout(Map.of("L40S-12Q", 3, "L40S-12A", 2));

        assertThat(Planner.plan(card, demand)).isEqualTo(Planner.plan(card, demand));
        assertThat(shortly((CardPlan) Planner.plan(card, demand)))
                .containsExactly("set 0 1153", "set 1 1153", "set 2 1163");
    }

    static List<String> shortly(CardPlan plan) {
        List<String> steps = new ArrayList<>();
        for (Step step : plan.steps()) {
            if (step instanceof Step.EnableVfs enable) {
                steps.add("enable " + enable.count());
            } else if (step instanceof Step.SetType set) {
                steps.add("set " + index(set.vf()) + " " + set.typeId());
            } else if (step instanceof Step.ClearType clear) {
                steps.add("clear " + index(clear.vf()));
            }
        }
        if (plan.readAgain()) {
            steps.add("read again");
        }
        return steps;
    }

    private static int index(PciAddress vf) {
        return (vf.slot() << 3 | vf.function()) - 4;
    }
}
