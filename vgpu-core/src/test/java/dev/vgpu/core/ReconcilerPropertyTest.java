package dev.vgpu.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.spi.Discovery;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.statistics.StatisticsReport;
import net.jqwik.api.Tuple;
import net.jqwik.api.Tuple.Tuple2;

/**
 * Properties of {@link Reconciler#plan} on random snapshots. Snapshots are built from random devices through
 * {@link Snapshot#builder()} (so random id and name conflicts are settled as in production); the second
 * snapshot is either an edit of the first (most resources equal, some changed, removed or new) or unrelated.
 */
class ReconcilerPropertyTest {

    static final List<String> SOURCES = List.of("passthrough", "mdev", "vendor-vfio");
    static final int ID_SPACE = 48;

    @Property(tries = 300)
    @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF)
    void applyingThePlanToBeforeYieldsAfter(@ForAll("pairs") Tuple2<Snapshot, Snapshot> pair) {
        Snapshot a = pair.get1();
        Snapshot b = pair.get2();

        Plan plan = Reconciler.plan(a, b);

        assertThat(plan.applyTo(a.resources())).isEqualTo(b.resources());
        assertThat(Reconciler.plan(b, a).applyTo(b.resources())).isEqualTo(a.resources());

        // the generators must keep producing every kind of change and resources that stay equal
        collect("add", plan.changes().stream().anyMatch(c -> c instanceof Plan.Add));
        collect("update", plan.changes().stream().anyMatch(c -> c instanceof Plan.Update));
        collect("remove", plan.changes().stream().anyMatch(c -> c instanceof Plan.Remove));
        collect("unchanged", a.resources().entrySet().stream()
                .anyMatch(e -> e.getValue().equals(b.resources().get(e.getKey()))));
    }

    static void collect(String label, boolean seen) {
        Statistics.label(label).collect(seen);
        Statistics.label(label).coverage(coverage -> coverage.check(true).percentage(p -> p >= 10));
    }

    @Property(tries = 200)
    void aSnapshotComparedWithItselfOrAnEqualCopyNeedsNothing(@ForAll("snapshots") Snapshot a) {
        assertThat(Reconciler.plan(a, a).isEmpty()).isTrue();
        assertThat(Reconciler.plan(a, rebuilt(a)).isEmpty()).isTrue();
    }

    @Property(tries = 300)
    void thePlanTouchesExactlyTheResourcesThatDiffer(@ForAll("pairs") Tuple2<Snapshot, Snapshot> pair) {
        Snapshot a = pair.get1();
        Snapshot b = pair.get2();
        Set<ResourceName> differing = new TreeSet<>();
        Set<ResourceName> all = new TreeSet<>(a.resources().keySet());
        all.addAll(b.resources().keySet());
        for (ResourceName name : all) {
            if (!Objects.equals(a.resources().get(name), b.resources().get(name))) {
                differing.add(name);
            }
        }

        Plan plan = Reconciler.plan(a, b);

        assertThat(plan.touched()).isEqualTo(differing);
        assertThat(plan.changes()).hasSameSizeAs(differing);
    }

    @Property(tries = 300)
    void everyChangeDescribesBothSidesAndTheOrderIsFixed(@ForAll("pairs") Tuple2<Snapshot, Snapshot> pair) {
        Snapshot a = pair.get1();
        Snapshot b = pair.get2();
        List<String> kinds = new ArrayList<>();

        for (Plan.Change change : Reconciler.plan(a, b).changes()) {
            if (change instanceof Plan.Remove remove) {
                assertThat(remove.previous()).isEqualTo(a.resources().get(remove.resource()));
                assertThat(b.resources()).doesNotContainKey(remove.resource());
                kinds.add("1 remove " + remove.resource().name());
            } else if (change instanceof Plan.Update update) {
                assertThat(update.previous()).isEqualTo(a.resources().get(update.resource()));
                assertThat(update.next()).isEqualTo(b.resources().get(update.resource()));
                assertThat(update.previous()).isNotEqualTo(update.next());
                kinds.add("2 update " + update.resource().name());
            } else {
                Plan.Add add = (Plan.Add) change;
                assertThat(a.resources()).doesNotContainKey(add.resource());
                assertThat(add.next()).isEqualTo(b.resources().get(add.resource()));
                kinds.add("3 add " + add.resource().name());
            }
        }

        // removals, then updates, then additions, each by resource name
        assertThat(kinds).isSorted();
    }

    @Property(tries = 200)
    void thePlanIsDeterministic(@ForAll("pairs") Tuple2<Snapshot, Snapshot> pair) {
        Snapshot a = pair.get1();
        Snapshot b = pair.get2();

        Plan first = Reconciler.plan(a, b);

        assertThat(Reconciler.plan(a, b)).isEqualTo(first);
        assertThat(Reconciler.plan(rebuilt(a), rebuilt(b))).isEqualTo(first);
    }

    @Provide
    Arbitrary<Snapshot> snapshots() {
        return deviceLists().map(ReconcilerPropertyTest::snapshot);
    }

    @Provide
    Arbitrary<Tuple2<Snapshot, Snapshot>> pairs() {
        Arbitrary<Tuple2<Snapshot, Snapshot>> edited = deviceLists().flatMap(before -> Combinators.combine(
                        Arbitraries.integers().between(0, 9).list().ofSize(before.size()),
                        devices().list().ofMaxSize(6))
                .as((edits, added) -> Tuple.of(snapshot(before), snapshot(edit(before, edits, added)))));
        Arbitrary<Tuple2<Snapshot, Snapshot>> unrelated = Combinators.combine(snapshots(), snapshots()).as(Tuple::of);
        return Arbitraries.frequencyOf(Tuple.of(4, edited), Tuple.of(1, unrelated));
    }

    Arbitrary<List<Device>> deviceLists() {
        return devices().list().ofMaxSize(40);
    }

    Arbitrary<Device> devices() {
        return Combinators.combine(
                Arbitraries.of(SOURCES),
                Arbitraries.integers().between(0, ID_SPACE - 1),
                Arbitraries.integers().between(0, 7),
                Arbitraries.integers().between(0, 1).optional(),
                Arbitraries.integers().between(0, 9).optional(),
                Arbitraries.integers().between(0, 3).optional(),
                Arbitraries.of(true, false))
                .as(ReconcilerPropertyTest::device);
    }

    static Device device(String source, int id, int resource, Optional<Integer> numa, Optional<Integer> group,
                         Optional<Integer> parent, boolean cdev) {
        boolean mediated = source.equals("mdev");
        String deviceId = mediated ? String.format(Locale.ROOT, "%08x-0000-4000-8000-%012x", id, id)
                : String.format(Locale.ROOT, "0000:%02x:00.%d", id / 8, id % 8);
        Device.Builder builder = Device.builder(deviceId, new ResourceName("R" + resource), source,
                mediated ? Attachment.MEDIATED : Attachment.VFIO_PCI);
        numa.ifPresent(builder::numaNode);
        group.ifPresent(g -> builder.iommuGroup(String.valueOf(g)));
        parent.ifPresent(p -> builder.parent(new PciAddress(0, 0x40 + p, 0, 0)));
        if (cdev && !mediated) {
            builder.vfioCdev("vfio" + id);
        }
        return builder.build();
    }

    /** Edits per device: 0 drops it, 1 moves it to another resource, 2 flips its NUMA node, else keeps it. */
    static List<Device> edit(List<Device> before, List<Integer> edits, List<Device> added) {
        List<Device> after = new ArrayList<>();
        for (int i = 0; i < before.size(); i++) {
            Device d = before.get(i);
            switch (edits.get(i)) {
                case 0:
                    break;
                case 1:
                    int next = (Integer.parseInt(d.resource().name().substring(1)) + 1) % 8;
                    after.add(d.withResource(new ResourceName("R" + next)));
                    break;
                case 2:
                    after.add(new Device(d.id(), d.resource(), d.source(), d.attachment(), d.parent(),
                            d.iommuGroup(), d.numaNode().isPresent() ? java.util.OptionalInt.empty()
                            : java.util.OptionalInt.of(1), d.vfioCdev(), d.identity()));
                    break;
                default:
                    after.add(d);
            }
        }
        after.addAll(added);
        return after;
    }

    static Snapshot snapshot(List<Device> devices) {
        Snapshot.Builder builder = Snapshot.builder();
        for (String source : SOURCES) {
            Discovery.Builder discovery = Discovery.builder();
            devices.stream().filter(d -> d.source().equals(source)).forEach(discovery::add);
            builder.add(source, discovery.build());
        }
        return builder.build();
    }

    /** An equal snapshot made of new objects, as every rescan builds. */
    static Snapshot rebuilt(Snapshot snapshot) {
        List<Device> copies = new ArrayList<>();
        for (Resource resource : snapshot.resources().values()) {
            for (Device d : resource.devices()) {
                copies.add(new Device(new String(d.id()), new ResourceName(new String(d.resource().name())),
                        d.source(), d.attachment(), d.parent(), d.iommuGroup(), d.numaNode(), d.vfioCdev(),
                        d.identity().map(String::new)));
            }
        }
        return snapshot(copies);
    }
}
