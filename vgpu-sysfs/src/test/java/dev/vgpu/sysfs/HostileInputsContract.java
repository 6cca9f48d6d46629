package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.Device;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** docs/HOST-FACTS.md §8 traps 1-12 and other hostile trees: every bad device is a skip or ignored, never a crash. */
@Tag("reliability")
abstract class HostileInputsContract extends SourceTestBase {

    static final String GPU = "0000:41:00.0";
    static final String VF = "0000:1b:00.4";

    void oneGpu() {
        tree.passthroughGpu(GPU, 0x2335).iommuGroup(41).numa(0).create();
    }

    void oneConfiguredVf() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(2, 100).numa(0)
                .catalog(Map.of(1428L, "NVIDIA H200X-141C")).create();
        tree.configureVf(VF, 1428);
    }

    // trap 1: numa_node
    @ParameterizedTest(name = "numa_node \"{0}\" -> {1}")
    @CsvSource(value = {"'-1\n'|", "''|", "abc|", "1.5|", "'0x1'|", "'3\n'|3", "' 2 \n'|2"}, delimiter = '|')
    void numaIsOmittedUnlessNonNegative(String content, Integer expected) {
        oneGpu();
        oneConfiguredVf();
        tree.writeAttribute(GPU, "numa_node", content).writeAttribute(VF, "numa_node", content);

        for (DeviceSource source : List.of(PASSTHROUGH, VENDOR)) {
            Device device = scan(source).devices().get(0);
            if (expected == null) {
                assertThat(device.numaNode()).isEmpty();
            } else {
                assertThat(device.numaNode()).hasValue(expected);
            }
        }
    }

    @Test
    void missingNumaFileIsOmitted() {
        oneGpu();
        tree.delete("sys/bus/pci/devices/" + GPU + "/numa_node");

        assertThat(scan(PASSTHROUGH).devices().get(0).numaNode()).isEmpty();
    }

    // trap 2: vendor and device ids
    @ParameterizedTest(name = "vendor \"{0}\" is skipped")
    @ValueSource(strings = {"", "\n", "0", "0x", "0x1", "10de\n", "0x10de0\n", "0xzzzz\n", "0x10de 0x10de\n", "\u0000\u0001",
        "0x\uff11\uff10de\n"})
    void garbageVendorIsASkipNamingTheFile(String content) {
        oneGpu();
        oneConfiguredVf();
        tree.writeAttribute(GPU, "vendor", content).writeAttribute(VF, "vendor", content);

        assertThat(skips(scan(PASSTHROUGH))).containsOnlyKeys(GPU).hasEntrySatisfying(GPU,
                reason -> assertThat(reason).contains(GPU, "vendor"));
        assertThat(skips(scan(VENDOR))).containsOnlyKeys(VF).hasEntrySatisfying(VF,
                reason -> assertThat(reason).contains(VF, "vendor"));
    }

    @ParameterizedTest(name = "vendor \"{0}\" is NVIDIA")
    @ValueSource(strings = {"0x10de", "0x10DE\n", " 0x10de \n", "0X10de\r\n"})
    void vendorToleratesCaseAndWhitespace(String content) {
        oneGpu();
        tree.writeAttribute(GPU, "vendor", content);

        assertThat(resources(scan(PASSTHROUGH))).containsOnlyKeys("GH100_H200_SXM_141GB");
    }

    @ParameterizedTest(name = "device \"{0}\" is skipped")
    @ValueSource(strings = {"", "0x23", "2335", "0x2335x"})
    void garbageDeviceIdIsASkip(String content) {
        oneGpu();
        tree.writeAttribute(GPU, "device", content);

        assertThat(skips(scan(PASSTHROUGH)).get(GPU)).contains("device");
    }

    @Test
    void missingVendorIsASkip() {
        oneGpu();
        tree.delete("sys/bus/pci/devices/" + GPU + "/vendor");

        assertThat(skips(scan(PASSTHROUGH)).get(GPU)).contains("vendor is missing");
    }

    // trap 3: links
    @Test
    void danglingDriverLinkMeansUnbound() {
        oneGpu();
        oneConfiguredVf();
        tree.delete("sys/bus/pci/drivers");

        assertThat(scan(PASSTHROUGH).devices()).isEmpty();
        assertThat(scan(PASSTHROUGH).skipped()).isEmpty();
        assertThat(scan(VENDOR).devices()).isEmpty();
        assertThat(scan(VENDOR).skipped()).isEmpty();
    }

    @Test
    void danglingBusLinkIsAQuietSkipForBothPciSources() {
        oneGpu();
        tree.symlink("sys/bus/pci/devices/0000:99:00.0", "../../../devices/pci0000:90/0000:90:01.1/0000:99:00.0");

        for (DeviceSource source : List.of(PASSTHROUGH, VENDOR)) {
            Discovery found = scan(source);
            assertThat(skips(found)).containsOnlyKeys("0000:99:00.0");
            assertThat(skips(found).get("0000:99:00.0")).contains("vanished");
        }
        assertThat(resources(scan(PASSTHROUGH))).containsOnlyKeys("GH100_H200_SXM_141GB");
    }

    @Test
    void linksAreReadByTheirLastComponentWithoutFollowing() {
        oneGpu();
        tree.symlink("sys/bus/pci/devices/" + GPU + "/iommu_group", "../../somewhere/else/77")
                .symlink("sys/kernel/iommu_groups/77/devices/" + GPU, "../../../../bus/pci/devices/" + GPU);

        assertThat(scan(PASSTHROUGH).devices().get(0).iommuGroup()).contains("77");
    }

    @ParameterizedTest(name = "iommu_group \"{0}\" is skipped")
    @ValueSource(strings = {"../../../../kernel/iommu_groups/abc", "../../../../kernel/iommu_groups/-1", "/"})
    void iommuGroupWithoutANumberIsASkip(String linkText) {
        oneGpu();
        tree.symlink("sys/bus/pci/devices/" + GPU + "/iommu_group", linkText);

        assertThat(skips(scan(PASSTHROUGH)).get(GPU)).contains("iommu_group");
    }

    @Test
    void missingIommuGroupIsASkipForPassthroughAndVfs() {
        oneGpu();
        oneConfiguredVf();
        tree.delete("sys/bus/pci/devices/" + GPU + "/iommu_group").delete("sys/bus/pci/devices/" + VF + "/iommu_group");

        assertThat(skips(scan(PASSTHROUGH)).get(GPU)).contains("IOMMU");
        assertThat(skips(scan(VENDOR)).get(VF)).contains("IOMMU");
    }

    @Test
    void iommuGroupThatIsAFileIsASkip() {
        oneGpu();
        tree.delete("sys/bus/pci/devices/" + GPU + "/iommu_group").writeAttribute(GPU, "iommu_group", "41\n");

        assertThat(skips(scan(PASSTHROUGH)).get(GPU)).contains("iommu_group is not a link");
    }

    @Test
    void busEntryThatIsNotAPciAddressIsASkipWhenRelevant() {
        oneGpu();
        tree.symlink("sys/bus/pci/devices/gpu0", "../../../devices/pci0000:40/0000:40:01.1/" + GPU);

        assertThat(skips(scan(PASSTHROUGH))).containsOnlyKeys("gpu0");
        assertThat(skips(scan(PASSTHROUGH)).get("gpu0")).contains("not a PCI address");
    }

    @Test
    void busEntryThatIsAPlainFileIsASkipNotACrash() {
        oneGpu();
        tree.writeFile("sys/bus/pci/devices/0000:99:00.0", "garbage");

        assertThat(skips(scan(PASSTHROUGH))).containsOnlyKeys("0000:99:00.0");
        assertThat(resources(scan(PASSTHROUGH))).containsOnlyKeys("GH100_H200_SXM_141GB");
    }

    // traps 5, 7, 8: vendor-VFIO files
    @ParameterizedTest(name = "current_vgpu_type \"{0}\" is skipped")
    @ValueSource(strings = {"abc", "-5", "1428 1414", "0x594", "99999999999999999999", "14\u000028"})
    void garbageCurrentTypeIsASkip(String content) {
        oneConfiguredVf();
        tree.writeAttribute(VF, "nvidia/current_vgpu_type", content);

        assertThat(skips(scan(VENDOR))).containsOnlyKeys(VF).hasEntrySatisfying(VF,
                reason -> assertThat(reason).contains("current_vgpu_type"));
    }

    @ParameterizedTest(name = "current_vgpu_type \"{0}\" means unconfigured")
    @ValueSource(strings = {"", "0", "0\n", " 0 \r\n", "\n"})
    void zeroOrEmptyCurrentTypeIsUnconfigured(String content) {
        oneConfiguredVf();
        tree.writeAttribute(VF, "nvidia/current_vgpu_type", content);

        assertThat(scan(VENDOR).devices()).isEmpty();
        assertThat(scan(VENDOR).skipped()).isEmpty();
    }

    @Test
    void missingCurrentTypeMeansNotVgpuCapable() {
        oneConfiguredVf();
        tree.delete("sys/bus/pci/devices/" + VF + "/nvidia/current_vgpu_type");

        assertThat(scan(VENDOR).devices()).isEmpty();
        assertThat(scan(VENDOR).skipped()).isEmpty();
    }

    @Test
    void oversizedFileIsASkip() {
        oneConfiguredVf();
        tree.writeAttribute(VF, "nvidia/current_vgpu_type", "1".repeat(70_000));

        assertThat(skips(scan(VENDOR)).get(VF)).contains("larger than");
    }

    @Test
    void functionWithNeitherPhysfnNorSriovButATypeIsASkip() {
        oneConfiguredVf();
        tree.delete("sys/bus/pci/devices/" + VF + "/physfn");

        assertThat(skips(scan(VENDOR)).get(VF)).contains("physfn", "sriov_totalvfs");
    }

    @Test
    void physfnNamingNoAddressIsASkip() {
        oneConfiguredVf();
        tree.symlink("sys/bus/pci/devices/" + VF + "/physfn", "../not-a-bdf");

        assertThat(skips(scan(VENDOR)).get(VF)).contains("physfn", "not-a-bdf");
    }

    @Test
    void unreadableOrGarbageCatalogsDoNotHideTheRest() {
        oneConfiguredVf();
        tree.delete("sys/bus/pci/devices/0000:1b:00.0/nvidia/creatable_vgpu_types")
                .mkdirs("sys/bus/pci/devices/0000:1b:00.0/nvidia/creatable_vgpu_types")
                .writeAttribute(VF, "nvidia/creatable_vgpu_types", "\u00ff\u0000garbage\nID : vGPU Name\n");

        assertThat(resources(scan(VENDOR))).containsOnlyKeys("NVIDIA_H200X-141C");
    }

    @Test
    void catalogsThatAreAllGarbageLeaveTheVfUnnamed() {
        oneConfiguredVf();
        for (String function : List.of("0000:1b:00.0", VF, "0000:1b:00.5")) {
            tree.writeAttribute(function, "nvidia/creatable_vgpu_types", "1428 NVIDIA H200X-141C\n: x\n");
        }

        assertThat(skips(scan(VENDOR)).get(VF)).contains("1428");
    }

    @Test
    void profileNameWithNothingUsableIsASkip() {
        oneConfiguredVf();
        tree.rewriteCardCatalogs("0000:1b:00.0", Map.of(1428L, "!!! ???"));

        assertThat(skips(scan(VENDOR)).get(VF)).contains("no valid resource name", "1428");
    }

    // mdev
    @ParameterizedTest(name = "mdev entry link \"{0}\" is skipped")
    @ValueSource(strings = {"x", "../x", "../../../devices/pci0000:00/not-a-bdf/aa618089-8b16-4d01-a136-25a0f3c73123"})
    void mdevLinkWithoutAParentIsASkip(String linkText) {
        tree.symlink("sys/bus/mdev/devices/aa618089-8b16-4d01-a136-25a0f3c73123", linkText);

        assertThat(skips(scan(MDEV))).containsOnlyKeys("aa618089-8b16-4d01-a136-25a0f3c73123");
    }

    @ParameterizedTest(name = "mdev with {0} is skipped")
    @CsvSource({"no mdev_type, mdev_type is missing", "no name, name is missing", "empty name, no valid resource name",
        "symbol name, no valid resource name", "no group, IOMMU", "plain entry, not a link", "dangling, vanished"})
    void brokenMdevIsASkip(String breakage, String expectedReason) {
        String uuid = PassthroughAndMdevContract.UUID1;
        tree.nvidiaGpu("0000:06:00.0", 0x2236).create();
        tree.mdev(uuid, "0000:06:00.0", "nvidia-558", "NVIDIA A10-8Q", 7);
        tree.mdev(PassthroughAndMdevContract.UUID2, "0000:06:00.0", "nvidia-559", "NVIDIA A10-12Q", 8);
        String typeName = "sys/bus/pci/devices/0000:06:00.0/mdev_supported_types/nvidia-558/name";
        String mdevDir = "sys/bus/pci/devices/0000:06:00.0/" + uuid;
        switch (breakage) {
            case "no mdev_type" -> tree.delete(mdevDir + "/mdev_type");
            case "no name" -> tree.mkdirs("sys/bus/pci/devices/0000:06:00.0/mdev_supported_types/nvidia-1")
                    .symlink(mdevDir + "/mdev_type", "../mdev_supported_types/nvidia-1");
            case "empty name" -> tree.writeFile(typeName, "\n");
            case "symbol name" -> tree.writeFile(typeName, "!!!\n");
            case "no group" -> tree.delete(mdevDir + "/iommu_group");
            case "plain entry" -> tree.delete("sys/bus/mdev/devices/" + uuid).mkdirs("sys/bus/mdev/devices/" + uuid);
            case "dangling" -> tree.delete(mdevDir);
            default -> throw new IllegalArgumentException(breakage);
        }

        Discovery found = scan(MDEV);

        assertThat(skips(found)).containsOnlyKeys(uuid);
        assertThat(skips(found).get(uuid)).contains(uuid).contains(expectedReason);
        assertThat(found.devices()).extracting(Device::id).containsExactly(PassthroughAndMdevContract.UUID2);
    }

    @Test
    void mdevEntryWhoseNameIsNoDeviceIdIsASkip() {
        tree.nvidiaGpu("0000:06:00.0", 0x2236).create();
        tree.mdev("a,b", "0000:06:00.0", "nvidia-558", "NVIDIA A10-8Q", 7);

        assertThat(skips(scan(MDEV)).get("a,b")).contains("not a usable device id");
    }

    // roots and bus directories
    @Test
    void missingRootIsTheOnlyFailure() {
        Host missing = Host.of(tree.path("does-not-exist"));

        for (DeviceSource source : ALL) {
            assertThatThrownBy(() -> source.discover(missing)).isInstanceOf(IOException.class)
                    .hasMessageContaining("does-not-exist");
        }
    }

    @Test
    void aRootWithThePciBusButNoMdevBusHasNoDevicesAndNoFailure() {
        tree.mkdirs("sys/bus/pci/devices").writeFile("proc/version", "Linux\n");

        for (DeviceSource source : ALL) {
            assertThat(scan(source)).isEqualTo(Discovery.empty());
        }
    }

    @ParameterizedTest(name = "a root with only \"{0}\" fails the PCI sources")
    @ValueSource(strings = {"proc", "sys", "sys/bus", "sys/bus/pci"})
    void aMissingPciBusUnderAnExistingRootIsAFailureNotNoDevices(String only) {
        tree.mkdirs(only);

        for (DeviceSource source : List.of(PASSTHROUGH, VENDOR)) {
            assertThatThrownBy(() -> source.discover(host())).isInstanceOf(IOException.class)
                    .hasMessageContaining("sys/bus/pci/devices is missing under the host root");
        }
    }

    @ParameterizedTest(name = "a root with only \"{0}\" fails the mdev source")
    @ValueSource(strings = {"proc", "sys", "sys/bus/mdev"})
    void aMissingSysBusOrAnMdevBusWithoutDevicesIsAFailure(String only) {
        tree.mkdirs("sys/bus/pci/devices").delete("sys/bus").mkdirs(only);

        assertThatThrownBy(() -> MDEV.discover(host())).isInstanceOf(IOException.class)
                .hasMessageContaining("sys/bus/mdev/devices is missing");
    }

    @Test
    void aPciBusThatVanishesAndReturnsFailsInBetweenAndThenFindsTheDevicesAgain() throws IOException {
        oneGpu();
        oneConfiguredVf();
        tree.mkdirs("sys/bus/mdev/devices");
        Discovery before = scan(PASSTHROUGH);
        tree.path("sys/bus/pci/devices").getFileSystem().provider()
                .move(tree.path("sys/bus/pci/devices"), tree.path("sys/bus/pci/devices.away"));

        assertThatThrownBy(() -> PASSTHROUGH.discover(host())).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> VENDOR.discover(host())).isInstanceOf(IOException.class);
        assertThat(scan(MDEV)).isEqualTo(Discovery.empty());

        tree.path("sys/bus/pci/devices").getFileSystem().provider()
                .move(tree.path("sys/bus/pci/devices.away"), tree.path("sys/bus/pci/devices"));
        assertThat(scan(PASSTHROUGH)).isEqualTo(before);
        assertThat(resources(scan(VENDOR))).containsOnlyKeys("NVIDIA_H200X-141C");
    }

    // bounded skip records
    /** Creates {@code count} bus entries whose links dangle, named 0001:00:00.0 upwards. */
    void danglingBusEntries(int count) {
        tree.mkdirs("sys/bus/pci/devices");
        for (int i = 0; i < count; i++) {
            String bdf = String.format("0001:%02x:%02x.%d", i >> 8 & 0xff, i >> 3 & 0x1f, i & 7);
            tree.symlink("sys/bus/pci/devices/" + (i < 0x10000 ? bdf : "x" + i), "../../../devices/gone/" + bdf);
        }
    }

    @Test
    void manyBadBusEntriesListTheFirstHundredByIdAndCountTheRest() {
        danglingBusEntries(250);
        oneGpu();

        for (DeviceSource source : List.of(PASSTHROUGH, VENDOR)) {
            Discovery found = scan(source);
            assertThat(found.skipped()).hasSize(Discovery.LISTED_SKIPS);
            assertThat(found.skipped()).extracting(s -> s.id()).isSorted().startsWith("0001:00:00.0")
                    .endsWith("0001:00:0c.3");
            assertThat(found.unlistedSkips()).isEqualTo(150);
            assertThat(found.skippedCount()).isEqualTo(250);
            assertThat(scan(source)).as("deterministic").isEqualTo(found);
        }
        assertThat(resources(scan(PASSTHROUGH))).containsOnlyKeys("GH100_H200_SXM_141GB");
    }

    // traps 10-12
    @Test
    void sameNameFromMdevAndVendorVfioIsSettledByTheSnapshot() {
        tree.nvidiaGpu("0000:06:00.0", 0x2236).create();
        tree.mdev(PassthroughAndMdevContract.UUID1, "0000:06:00.0", "nvidia-558", "NVIDIA A10-8Q", 7);
        tree.sriovCard("0000:1b:00.0", 0x2236).virtualFunctions(1, 100).catalog(Map.of(9L, "NVIDIA A10-8Q")).create();
        tree.configureVf(VF, 9);

        Snapshot snapshot = Snapshot.builder().add("mdev", scan(MDEV)).add("vendor-vfio", scan(VENDOR)).build();

        assertThat(snapshot.resource(new ResourceName("NVIDIA_A10-8Q")).orElseThrow().source()).isEqualTo("mdev");
        assertThat(snapshot.skipped()).extracting(s -> s.id()).contains(VF);
    }

    @Test
    void scansAreDeterministicAndSorted() {
        tree.sriovCard("0000:3b:00.0", 0x2335).virtualFunctions(8, 200).catalog(Map.of(1L, "NVIDIA X-1Q")).create();
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(8, 100).catalog(Map.of(1L, "NVIDIA X-1Q")).create();
        for (int i = 7; i >= 0; i--) {
            tree.configureVf(dev.vgpu.testing.SysfsTree.vfAddress("0000:3b:00.0", i), 1);
            tree.configureVf(dev.vgpu.testing.SysfsTree.vfAddress("0000:1b:00.0", i), 1);
        }

        Discovery first = scan(VENDOR);

        assertThat(first.devices()).extracting(Device::id).isSorted().hasSize(16);
        assertThat(scan(VENDOR)).isEqualTo(first);
    }
}
