package dev.vgpu.core;

import static dev.vgpu.core.TestDevices.bdf;
import static dev.vgpu.core.TestDevices.mdev;
import static dev.vgpu.core.TestDevices.name;
import static dev.vgpu.core.TestDevices.pci;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.spi.Discovery;
import org.junit.jupiter.api.Test;

class SnapshotTest {

    static final String UUID_A = "aa618089-8b16-4d01-a136-25a0f3c73123";
    static final String UUID_B = "bb618089-8b16-4d01-a136-25a0f3c73123";

    @Test
    void sortsResourcesByNameAndDevicesById() {
        Discovery vendor = Discovery.builder()
                .add(pci("0000:42:00.5", "NVIDIA_L40S-1Q", "vendor-vfio").build())
                .add(pci("0000:41:00.4", "NVIDIA_L40S-2Q", "vendor-vfio").build())
                .add(pci("0000:41:00.5", "NVIDIA_L40S-1Q", "vendor-vfio").build())
                .add(pci("0000:1b:00.4", "NVIDIA_L40S-1Q", "vendor-vfio").build())
                .build();

        Snapshot snapshot = Snapshot.builder().add("vendor-vfio", vendor).build();

        assertThat(snapshot.resources().keySet()).extracting(ResourceName::name)
                .containsExactly("NVIDIA_L40S-1Q", "NVIDIA_L40S-2Q");
        assertThat(snapshot.resource(name("NVIDIA_L40S-1Q")).orElseThrow().devices()).extracting(Device::id)
                .containsExactly("0000:1b:00.4", "0000:41:00.5", "0000:42:00.5");
        assertThat(snapshot.deviceCount()).isEqualTo(4);
        assertThat(snapshot.skipped()).isEmpty();
    }

    @Test
    void aDeviceIdClaimedByTwoSourcesStaysWithTheFirst() {
        Discovery passthrough = Discovery.builder()
                .add(pci("0000:41:00.0", "GH100_H200_SXM_141GB", "passthrough").iommuGroup("41").build())
                .build();
        Discovery custom = Discovery.builder()
                .add(pci("0000:41:00.0", "LAB_GPU", "lab").iommuGroup("41").build())
                .add(pci("0000:42:00.0", "LAB_GPU", "lab").iommuGroup("42").build())
                .build();

        Snapshot snapshot = Snapshot.builder().add("passthrough", passthrough).add("lab", custom).build();

        assertThat(snapshot.device("0000:41:00.0")).map(Device::source).contains("passthrough");
        assertThat(snapshot.resource(name("LAB_GPU")).orElseThrow().ids()).containsExactly("0000:42:00.0");
        assertThat(snapshot.skipped()).containsExactly(new Skipped("0000:41:00.0", "lab",
                "device id already claimed by source passthrough under nvidia.com/GH100_H200_SXM_141GB"));
    }

    @Test
    void aResourceNameProducedByTwoSourcesStaysWithTheFirst() {
        // trap 11: mdev and vendor-VFIO can produce one name; they would share one socket
        Discovery mdevs = Discovery.builder()
                .add(mdev(UUID_A, "NVIDIA_A10-8Q", "mdev").parent(bdf("0000:3b:00.0")).iommuGroup("120").build())
                .build();
        Discovery vfs = Discovery.builder()
                .add(pci("0000:41:00.4", "NVIDIA_A10-8Q", "vendor-vfio").build())
                .add(pci("0000:41:00.5", "NVIDIA_A10-8Q", "vendor-vfio").build())
                .add(pci("0000:41:00.6", "NVIDIA_A10-4Q", "vendor-vfio").build())
                .build();

        Snapshot snapshot = Snapshot.builder().add("mdev", mdevs).add("vendor-vfio", vfs).build();

        Resource shared = snapshot.resource(name("NVIDIA_A10-8Q")).orElseThrow();
        assertThat(shared.source()).isEqualTo("mdev");
        assertThat(shared.ids()).containsExactly(UUID_A);
        assertThat(snapshot.resource(name("NVIDIA_A10-4Q")).orElseThrow().source()).isEqualTo("vendor-vfio");
        String reason = "resource nvidia.com/NVIDIA_A10-8Q is already produced by source mdev"
                + " (it would share one socket)";
        assertThat(snapshot.skipped()).containsExactly(
                new Skipped("0000:41:00.4", "vendor-vfio", reason),
                new Skipped("0000:41:00.5", "vendor-vfio", reason));
        assertThat(snapshot.device("0000:41:00.4")).isEmpty();
    }

    @Test
    void loadOrderDecidesWhoWins() {
        Discovery mdevs = Discovery.builder().add(mdev(UUID_A, "NVIDIA_A10-8Q", "mdev").build()).build();
        Discovery vfs = Discovery.builder().add(pci("0000:41:00.4", "NVIDIA_A10-8Q", "vendor-vfio").build()).build();

        Snapshot snapshot = Snapshot.builder().add("vendor-vfio", vfs).add("mdev", mdevs).build();

        assertThat(snapshot.resource(name("NVIDIA_A10-8Q")).orElseThrow().source()).isEqualTo("vendor-vfio");
        assertThat(snapshot.skipped()).singleElement().satisfies(s -> {
            assertThat(s.id()).isEqualTo(UUID_A);
            assertThat(s.source()).isEqualTo("mdev");
            assertThat(s.reason()).contains("already produced by source vendor-vfio");
        });
    }

    @Test
    void aSourceListingOneIdTwiceKeepsTheFirst() {
        Discovery twice = Discovery.builder()
                .add(pci("0000:41:00.4", "NVIDIA_L40S-1Q", "vendor-vfio").build())
                .add(pci("0000:41:00.4", "NVIDIA_L40S-2Q", "vendor-vfio").build())
                .build();

        Snapshot snapshot = Snapshot.builder().add("vendor-vfio", twice).build();

        assertThat(snapshot.resources().keySet()).containsExactly(name("NVIDIA_L40S-1Q"));
        assertThat(snapshot.skipped()).singleElement().extracting(Skipped::reason).isEqualTo(
                "listed twice by vendor-vfio (under nvidia.com/NVIDIA_L40S-1Q and nvidia.com/NVIDIA_L40S-2Q)");
    }

    @Test
    void oneResourceCannotMixAttachments() {
        Discovery mixed = Discovery.builder()
                .add(pci("0000:41:00.4", "ODD", "lab").build())
                .add(mdev(UUID_A, "ODD", "lab").build())
                .build();

        Snapshot snapshot = Snapshot.builder().add("lab", mixed).build();

        assertThat(snapshot.resource(name("ODD")).orElseThrow().attachment()).isEqualTo(Attachment.VFIO_PCI);
        assertThat(snapshot.skipped()).singleElement().extracting(Skipped::reason).asString()
                .contains("mixes attachments");
    }

    @Test
    void aDeviceMustCarryTheSourceThatDiscoveredIt() {
        Discovery lying = Discovery.builder().add(pci("0000:41:00.4", "X", "passthrough").build()).build();

        assertThatThrownBy(() -> Snapshot.builder().add("lab", lying))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0000:41:00.4").hasMessageContaining("passthrough").hasMessageContaining("lab");
    }

    @Test
    void keepsEachSourcesSkipsAfterItsConflictsInLoadOrder() {
        Discovery first = Discovery.builder()
                .add(pci("0000:41:00.0", "A", "one").build())
                .skip("0000:50:00.0", "one", "driver nvidia, not a VFIO driver")
                .build();
        Discovery second = Discovery.builder()
                .add(pci("0000:41:00.0", "B", "two").build())
                .skip("0000:51:00.0", "two", "no iommu_group")
                .build();

        Snapshot snapshot = Snapshot.builder().add("one", first).add("two", second).build();

        assertThat(snapshot.skipped()).extracting(Skipped::id)
                .containsExactly("0000:50:00.0", "0000:41:00.0", "0000:51:00.0");
    }

    Snapshot host() {
        // a passthrough GPU with its audio function in one group, two VFs of one card under two profiles,
        // one VF of another card, two mdevs on a third card
        Discovery passthrough = Discovery.builder()
                .add(pci("0000:41:00.0", "GH100_H200_SXM_141GB", "passthrough").iommuGroup("41").numaNode(0)
                        .vfioCdev("vfio3").build())
                .add(pci("0000:41:00.1", "10de_audio", "passthrough").iommuGroup("41").numaNode(0).build())
                .build();
        Discovery vendor = Discovery.builder()
                .add(pci("0000:1b:00.5", "NVIDIA_L40S-2Q", "vendor-vfio").parent(bdf("0000:1b:00.0"))
                        .iommuGroup("72").numaNode(1).build())
                .add(pci("0000:1b:00.4", "NVIDIA_L40S-1Q", "vendor-vfio").parent(bdf("0000:1b:00.0"))
                        .iommuGroup("71").numaNode(1).build())
                .add(pci("0000:1c:00.4", "NVIDIA_L40S-1Q", "vendor-vfio").parent(bdf("0000:1c:00.0"))
                        .iommuGroup("81").build())
                .build();
        Discovery mdevs = Discovery.builder()
                .add(mdev(UUID_B, "GRID_T4-1Q", "mdev").parent(bdf("0000:3b:00.0")).iommuGroup("121").build())
                .add(mdev(UUID_A, "GRID_T4-1Q", "mdev").parent(bdf("0000:3b:00.0")).iommuGroup("120").build())
                .skip("cc618089-8b16-4d01-a136-25a0f3c73123", "mdev", "mdev_type/name unreadable")
                .build();
        return Snapshot.builder().add("passthrough", passthrough).add("mdev", mdevs).add("vendor-vfio", vendor)
                .build();
    }

    @Test
    void indexesDevicesByIdGroupAndParent() {
        Snapshot snapshot = host();

        assertThat(snapshot.device("0000:1b:00.4")).map(Device::resource).contains(name("NVIDIA_L40S-1Q"));
        assertThat(snapshot.device(UUID_A)).map(Device::attachment).contains(Attachment.MEDIATED);
        assertThat(snapshot.device("0000:99:00.0")).isEmpty();
        assertThat(snapshot.iommuGroup("0000:41:00.1")).contains("41");
        assertThat(snapshot.iommuGroup(UUID_B)).contains("121");
        assertThat(snapshot.iommuGroup("0000:99:00.0")).isEmpty();
        assertThat(snapshot.groupMembers("41")).extracting(Device::id).containsExactly("0000:41:00.0", "0000:41:00.1");
        assertThat(snapshot.groupMembers("72")).extracting(Device::id).containsExactly("0000:1b:00.5");
        assertThat(snapshot.groupMembers("999")).isEmpty();
        assertThat(snapshot.childrenOf(bdf("0000:1b:00.0"))).extracting(Device::id)
                .containsExactly("0000:1b:00.4", "0000:1b:00.5");
        assertThat(snapshot.childrenOf(bdf("0000:3b:00.0"))).extracting(Device::id).containsExactly(UUID_A, UUID_B);
        assertThat(snapshot.childrenOf(bdf("0000:41:00.0"))).isEmpty();
        assertThat(snapshot.deviceCount()).isEqualTo(7);
        assertThat(snapshot.toString()).isEqualTo("Snapshot[5 resources, 7 devices, 1 skipped]");
    }

    @Test
    void indexesAreImmutable() {
        Snapshot snapshot = host();

        assertThatThrownBy(() -> snapshot.resources().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> snapshot.groupMembers("41").clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> snapshot.childrenOf(bdf("0000:1b:00.0")).clear())
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> snapshot.skipped().clear()).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void discoveryOfGivesBackOneSourcesContribution() {
        Snapshot snapshot = host();

        Discovery vendor = snapshot.discoveryOf("vendor-vfio");
        Discovery mdevs = snapshot.discoveryOf("mdev");

        assertThat(vendor.devices()).extracting(Device::id)
                .containsExactlyInAnyOrder("0000:1b:00.4", "0000:1b:00.5", "0000:1c:00.4");
        assertThat(vendor.skipped()).isEmpty();
        assertThat(mdevs.devices()).extracting(Device::id).containsExactlyInAnyOrder(UUID_A, UUID_B);
        assertThat(mdevs.skipped()).extracting(Skipped::reason).containsExactly("mdev_type/name unreadable");
        assertThat(snapshot.discoveryOf("nobody")).isEqualTo(Discovery.empty());
    }

    @Test
    void aSourcesPreviousContributionRebuildsTheSameResources() {
        // fail safe: when a source throws, the daemon feeds its previous devices into the next snapshot
        Snapshot before = host();

        Snapshot after = Snapshot.builder()
                .add("passthrough", before.discoveryOf("passthrough"))
                .add("mdev", before.discoveryOf("mdev"))
                .add("vendor-vfio", before.discoveryOf("vendor-vfio"))
                .build();

        assertThat(after).isEqualTo(before).hasSameHashCodeAs(before);
        assertThat(Reconciler.plan(before, after).isEmpty()).isTrue();
    }

    @Test
    void theEmptySnapshot() {
        assertThat(Snapshot.empty().resources()).isEmpty();
        assertThat(Snapshot.empty().deviceCount()).isZero();
        assertThat(Snapshot.builder().build()).isEqualTo(Snapshot.empty());
        assertThat(Snapshot.builder().add("x", Discovery.empty()).build()).isEqualTo(Snapshot.empty());
    }

    @Test
    void equalInputsGiveEqualSnapshots() {
        assertThat(host()).isEqualTo(host()).hasSameHashCodeAs(host()).isNotEqualTo(Snapshot.empty());
    }
}
