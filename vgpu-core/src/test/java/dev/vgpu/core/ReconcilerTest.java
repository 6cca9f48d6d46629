package dev.vgpu.core;

import static dev.vgpu.core.TestDevices.bdf;
import static dev.vgpu.core.TestDevices.mdev;
import static dev.vgpu.core.TestDevices.name;
import static dev.vgpu.core.TestDevices.pci;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.spi.Discovery;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ReconcilerTest {

    static Device vf(String bdf, String profile) {
        return pci(bdf, profile, "vendor-vfio").parent(bdf("0000:1b:00.0")).iommuGroup("7" + bdf.charAt(11))
                .numaNode(0).build();
    }

    static Snapshot snapshot(Device... devices) {
        Discovery.Builder discovery = Discovery.builder();
        for (Device d : devices) {
            discovery.add(d);
        }
        return Snapshot.builder().add("vendor-vfio", discovery.build()).build();
    }

    static Snapshot base() {
        return snapshot(vf("0000:1b:00.4", "NVIDIA_L40S-1Q"), vf("0000:1b:00.5", "NVIDIA_L40S-1Q"),
                vf("0000:1b:00.6", "NVIDIA_L40S-2Q"), vf("0000:1b:00.7", "NVIDIA_L40S-4Q"));
    }

    @Test
    void aDeviceWhoseIdentityChangedInPlaceIsAnUpdate() {
        Device before = pci("0000:1b:00.4", "NVIDIA_L40S-1Q", "vendor-vfio").identity("vgpu-type:1152").build();
        Device after = pci("0000:1b:00.4", "NVIDIA_L40S-1Q", "vendor-vfio").identity("vgpu-type:1160").build();

        Plan plan = Reconciler.plan(snapshot(before), snapshot(after));

        assertThat(plan.changes()).singleElement().isInstanceOfSatisfying(Plan.Update.class,
                u -> assertThat(u.next().devices()).containsExactly(after));
    }

    @Test
    void aPlanSaysItsChangesInWordsNotAsRecords() {
        Snapshot after = snapshot(vf("0000:1b:00.4", "NVIDIA_L40S-1Q"), vf("0000:1b:00.6", "NVIDIA_L40S-2Q"),
                vf("0000:1b:00.7", "NVIDIA_L40S-8Q"));

        assertThat(Reconciler.plan(base(), after)).hasToString("remove nvidia.com/NVIDIA_L40S-4Q;"
                + " update nvidia.com/NVIDIA_L40S-1Q (1 device: +0 -1); add nvidia.com/NVIDIA_L40S-8Q (1 device)");
        assertThat(Reconciler.plan(base(), base())).hasToString("no changes");
    }

    @Test
    void equalSnapshotsNeedNothing() {
        assertThat(Reconciler.plan(base(), base()).isEmpty()).isTrue();
        Snapshot same = base();
        assertThat(Reconciler.plan(same, same).changes()).isEmpty();
        assertThat(Reconciler.plan(Snapshot.empty(), Snapshot.empty()).isEmpty()).isTrue();
    }

    @Test
    void fromNothingEveryResourceIsAddedInNameOrder() {
        Plan plan = Reconciler.plan(Snapshot.empty(), base());

        assertThat(plan.changes()).allSatisfy(c -> assertThat(c).isInstanceOf(Plan.Add.class));
        assertThat(plan.changes()).extracting(c -> c.resource().name())
                .containsExactly("NVIDIA_L40S-1Q", "NVIDIA_L40S-2Q", "NVIDIA_L40S-4Q");
    }

    @Test
    void toNothingEveryResourceIsRemoved() {
        Plan plan = Reconciler.plan(base(), Snapshot.empty());

        assertThat(plan.changes()).allSatisfy(c -> assertThat(c).isInstanceOf(Plan.Remove.class));
        assertThat(plan.touched()).extracting(ResourceName::name)
                .containsExactly("NVIDIA_L40S-1Q", "NVIDIA_L40S-2Q", "NVIDIA_L40S-4Q");
    }

    static Stream<Arguments> deviceValueChanges() {
        return Stream.<Arguments>of(
                Arguments.of("NUMA node", (UnaryOperator<Device.Builder>) b -> b.numaNode(1)),
                Arguments.of("NUMA node unknown", (UnaryOperator<Device.Builder>) b -> b.numaNode(-1)),
                Arguments.of("IOMMU group", (UnaryOperator<Device.Builder>) b -> b.iommuGroup("99")),
                Arguments.of("VFIO cdev", (UnaryOperator<Device.Builder>) b -> b.vfioCdev("vfio12")),
                Arguments.of("parent", (UnaryOperator<Device.Builder>) b -> b.parent(bdf("0000:1c:00.0"))));
    }

    @ParameterizedTest(name = "a changed {0} updates only its resource")
    @MethodSource("deviceValueChanges")
    void aChangedDeviceValueUpdatesOnlyItsResource(String what, UnaryOperator<Device.Builder> change) {
        Device changed = change.apply(pci("0000:1b:00.5", "NVIDIA_L40S-1Q", "vendor-vfio")
                .parent(bdf("0000:1b:00.0")).iommuGroup("75").numaNode(0)).build();
        Snapshot after = snapshot(vf("0000:1b:00.4", "NVIDIA_L40S-1Q"), changed,
                vf("0000:1b:00.6", "NVIDIA_L40S-2Q"), vf("0000:1b:00.7", "NVIDIA_L40S-4Q"));

        Plan plan = Reconciler.plan(base(), after);

        assertThat(plan.changes()).singleElement().isInstanceOfSatisfying(Plan.Update.class, u -> {
            assertThat(u.resource()).isEqualTo(name("NVIDIA_L40S-1Q"));
            assertThat(u.addedIds()).isEmpty();
            assertThat(u.removedIds()).isEmpty();
            assertThat(u.next().devices()).contains(changed);
        });
    }

    @Test
    void aProfileChangeMovesADeviceBetweenResources() {
        // VF .5 was reconfigured from 1Q to 2Q; 4Q vanished; 8Q is new; 2Q gains a device
        Snapshot after = snapshot(vf("0000:1b:00.4", "NVIDIA_L40S-1Q"), vf("0000:1b:00.5", "NVIDIA_L40S-2Q"),
                vf("0000:1b:00.6", "NVIDIA_L40S-2Q"), vf("0000:1b:00.7", "NVIDIA_L40S-8Q"));

        Plan plan = Reconciler.plan(base(), after);

        assertThat(plan.changes()).hasSize(4);
        assertThat(plan.changes().get(0)).isInstanceOfSatisfying(Plan.Remove.class,
                r -> assertThat(r.resource().name()).isEqualTo("NVIDIA_L40S-4Q"));
        assertThat(plan.changes().get(1)).isInstanceOfSatisfying(Plan.Update.class, u -> {
            assertThat(u.resource().name()).isEqualTo("NVIDIA_L40S-1Q");
            assertThat(u.removedIds()).containsExactly("0000:1b:00.5");
            assertThat(u.addedIds()).isEmpty();
        });
        assertThat(plan.changes().get(2)).isInstanceOfSatisfying(Plan.Update.class, u -> {
            assertThat(u.resource().name()).isEqualTo("NVIDIA_L40S-2Q");
            assertThat(u.addedIds()).containsExactly("0000:1b:00.5");
            assertThat(u.previous().ids()).containsExactly("0000:1b:00.6");
        });
        assertThat(plan.changes().get(3)).isInstanceOfSatisfying(Plan.Add.class,
                a -> assertThat(a.next().ids()).containsExactly("0000:1b:00.7"));
        assertThat(plan.applyTo(base().resources())).isEqualTo(after.resources());
    }

    @Test
    void aResourceTakenOverByAnotherSourceIsAnUpdate() {
        Snapshot before = Snapshot.builder().add("mdev", Discovery.builder()
                .add(mdev("aa618089-8b16-4d01-a136-25a0f3c73123", "NVIDIA_A10-8Q", "mdev").build()).build()).build();
        Snapshot after = Snapshot.builder().add("vendor-vfio", Discovery.builder()
                .add(pci("0000:41:00.4", "NVIDIA_A10-8Q", "vendor-vfio").build()).build()).build();

        Plan plan = Reconciler.plan(before, after);

        assertThat(plan.changes()).singleElement().isInstanceOfSatisfying(Plan.Update.class, u -> {
            assertThat(u.previous().source()).isEqualTo("mdev");
            assertThat(u.next().attachment()).isEqualTo(Attachment.VFIO_PCI);
        });
    }

    @Test
    void applyToLeavesItsInputAlone() {
        Snapshot before = base();
        Plan plan = Reconciler.plan(before, Snapshot.empty());

        assertThat(plan.applyTo(before.resources())).isEmpty();
        assertThat(before.resources()).hasSize(3);
    }

    @Test
    void anUpdateNamesOneResource() {
        Resource one = base().resources().get(name("NVIDIA_L40S-1Q"));
        Resource two = base().resources().get(name("NVIDIA_L40S-2Q"));

        assertThatThrownBy(() -> new Plan.Update(one, two)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Plan.Add(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new Plan.Remove(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void aPlanIsImmutable() {
        Plan plan = Reconciler.plan(Snapshot.empty(), base());

        assertThatThrownBy(() -> plan.changes().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThat(new Plan(List.of()).isEmpty()).isTrue();
    }
}
