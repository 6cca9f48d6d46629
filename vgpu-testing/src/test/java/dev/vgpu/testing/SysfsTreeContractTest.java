package dev.vgpu.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What {@link SysfsTree} writes, checked on every file system the subclasses provide. */
abstract class SysfsTreeContractTest {

    SysfsTree tree;

    /** A fresh, empty directory standing for the host root. */
    abstract Path newRoot() throws IOException;

    @BeforeEach
    void setUp() throws IOException {
        tree = SysfsTree.at(newRoot());
    }

    String link(String relative) throws IOException {
        return Files.readSymbolicLink(tree.path(relative)).toString();
    }

    String read(String relative) throws IOException {
        return Files.readString(tree.path(relative), StandardCharsets.UTF_8);
    }

    boolean exists(String relative) {
        return Files.exists(tree.path(relative), LinkOption.NOFOLLOW_LINKS);
    }

    @Test
    void passthroughGpuIsLaidOutWithRelativeLinks() throws IOException {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).vfioCdev("vfio3").create();

        String dir = "sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0";
        assertThat(link("sys/bus/pci/devices/0000:41:00.0"))
                .isEqualTo("../../../devices/pci0000:40/0000:40:01.1/0000:41:00.0");
        assertThat(read(dir + "/vendor")).isEqualTo("0x10de\n");
        assertThat(read(dir + "/device")).isEqualTo("0x2335\n");
        assertThat(read(dir + "/numa_node")).isEqualTo("0\n");
        assertThat(read(dir + "/class")).isEqualTo("0x030200\n");
        assertThat(link(dir + "/driver")).isEqualTo("../../../../bus/pci/drivers/vfio-pci");
        assertThat(link(dir + "/iommu_group")).isEqualTo("../../../../kernel/iommu_groups/41");
        assertThat(link("sys/kernel/iommu_groups/41/devices/0000:41:00.0"))
                .isEqualTo("../../../../devices/pci0000:40/0000:40:01.1/0000:41:00.0");
        assertThat(link("sys/bus/pci/drivers/vfio-pci/0000:41:00.0"))
                .isEqualTo("../../../../devices/pci0000:40/0000:40:01.1/0000:41:00.0");
        assertThat(Files.isDirectory(tree.path(dir + "/vfio-dev/vfio3"))).isTrue();
        assertThat(exists("dev/vfio/vfio")).isTrue();
        assertThat(exists("dev/vfio/41")).isTrue();
        assertThat(exists("dev/vfio/devices/vfio3")).isTrue();
        assertThat(Files.isDirectory(tree.path("sys/bus/pci/devices/0000:41:00.0/iommu_group/devices"))).isTrue();
        assertThat(tree.devicePath("0000:41:00.0")).contains(tree.path(dir));
    }

    @Test
    void unknownNumaAndNoDriverAreTheDefaults() throws IOException {
        tree.function("0000:03:00.0", 0x8086, 0x1572).under("pci0000:00/0000:00:03.0").create();

        assertThat(read("sys/devices/pci0000:00/0000:00:03.0/0000:03:00.0/numa_node")).isEqualTo("-1\n");
        assertThat(read("sys/bus/pci/devices/0000:03:00.0/vendor")).isEqualTo("0x8086\n");
        assertThat(exists("sys/bus/pci/devices/0000:03:00.0/driver")).isFalse();
        assertThat(exists("sys/bus/pci/devices/0000:03:00.0/iommu_group")).isFalse();
        assertThat(exists("dev/vfio")).isFalse();
    }

    @Test
    void sriovCardLinksPfAndVfsBothWays() throws IOException {
        tree.sriovCard("0000:1b:00.0", 0x2335).numa(1).virtualFunctions(5, 100).vfioCdevs(10)
                .catalog(Map.of(1428L, "NVIDIA H200X-141C")).create();

        String pf = "sys/bus/pci/devices/0000:1b:00.0/";
        assertThat(read(pf + "sriov_totalvfs")).isEqualTo("5\n");
        assertThat(read(pf + "sriov_numvfs")).isEqualTo("5\n");
        assertThat(link(pf + "driver")).endsWith("/bus/pci/drivers/nvidia");
        assertThat(link(pf + "virtfn0")).isEqualTo("../0000:1b:00.4");
        assertThat(link(pf + "virtfn4")).isEqualTo("../0000:1b:01.0");
        assertThat(tree.virtualFunctions("0000:1b:00.0"))
                .containsExactly("0000:1b:00.4", "0000:1b:00.5", "0000:1b:00.6", "0000:1b:00.7", "0000:1b:01.0");
        String vf = "sys/bus/pci/devices/0000:1b:01.0/";
        assertThat(link(vf + "physfn")).isEqualTo("../0000:1b:00.0");
        assertThat(link(vf + "driver")).endsWith("/bus/pci/drivers/nvidia");
        assertThat(link(vf + "iommu_group")).endsWith("/kernel/iommu_groups/104");
        assertThat(read(vf + "device")).isEqualTo("0x2335\n");
        assertThat(read(vf + "numa_node")).isEqualTo("1\n");
        assertThat(read(vf + "nvidia/current_vgpu_type")).isEqualTo("0\n");
        assertThat(read(vf + "nvidia/creatable_vgpu_types")).isEqualTo("ID    : vGPU Name\n1428  : NVIDIA H200X-141C\n");
        assertThat(read(pf + "nvidia/creatable_vgpu_types")).isEqualTo(read(vf + "nvidia/creatable_vgpu_types"));
        assertThat(exists("dev/vfio/104")).isTrue();
        assertThat(exists("dev/vfio/devices/vfio14")).isTrue();
        assertThat(exists(vf + "sriov_totalvfs")).isFalse();
    }

    @Test
    void pfCatalogCanBeLeftOut() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(1, 5).catalogOnPf(false).create();

        assertThat(exists("sys/bus/pci/devices/0000:1b:00.0/nvidia/creatable_vgpu_types")).isFalse();
        assertThat(exists("sys/bus/pci/devices/0000:1b:00.4/nvidia/creatable_vgpu_types")).isTrue();
    }

    @Test
    void mdevLinksIntoItsParent() throws IOException {
        String uuid = "aa618089-8b16-4d01-a136-25a0f3c73123";
        tree.nvidiaGpu("0000:06:00.0", 0x2236).numa(1).create();
        tree.mdev(uuid, "0000:06:00.0", "nvidia-558", "NVIDIA A10-8Q", 7);

        assertThat(link("sys/bus/mdev/devices/" + uuid))
                .isEqualTo("../../../devices/pci0000:00/0000:00:01.1/0000:06:00.0/" + uuid);
        String mdev = "sys/bus/mdev/devices/" + uuid + "/";
        assertThat(link(mdev + "mdev_type")).isEqualTo("../mdev_supported_types/nvidia-558");
        assertThat(read(mdev + "mdev_type/name")).isEqualTo("NVIDIA A10-8Q\n");
        assertThat(read(mdev + "mdev_type/device_api")).isEqualTo("vfio-pci\n");
        assertThat(link(mdev + "iommu_group")).endsWith("/kernel/iommu_groups/7");
        assertThat(exists("dev/vfio/7")).isTrue();
        assertThat(exists("sys/class/mdev_bus/0000:06:00.0")).isTrue();

        tree.removeMdev(uuid);
        assertThat(exists("sys/bus/mdev/devices/" + uuid)).isFalse();
        assertThat(exists("dev/vfio/7")).isFalse();
        assertThat(exists("sys/bus/pci/devices/0000:06:00.0/" + uuid)).isFalse();
    }

    @Test
    void mdevNeedsItsParent() {
        assertThatThrownBy(() -> tree.mdev("aa618089-8b16-4d01-a136-25a0f3c73123", "0000:06:00.0", "nvidia-558",
                "NVIDIA A10-8Q", 7)).isInstanceOf(IllegalStateException.class).hasMessageContaining("0000:06:00.0");
    }

    @Test
    void configuringAndRewritingChangeOnlyTheNamedFiles() throws IOException {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(2, 100)
                .catalog(Map.of(1428L, "NVIDIA H200X-141C")).create();

        tree.configureVf("0000:1b:00.4", 1428).rewriteCatalog("0000:1b:00.4", Map.of());
        assertThat(read("sys/bus/pci/devices/0000:1b:00.4/nvidia/current_vgpu_type")).isEqualTo("1428\n");
        assertThat(read("sys/bus/pci/devices/0000:1b:00.4/nvidia/creatable_vgpu_types")).isEqualTo("ID    : vGPU Name\n");
        assertThat(read("sys/bus/pci/devices/0000:1b:00.5/nvidia/creatable_vgpu_types")).contains("1428");

        tree.rewriteCardCatalogs("0000:1b:00.0", Map.of()).unconfigureVf("0000:1b:00.4");
        assertThat(read("sys/bus/pci/devices/0000:1b:00.0/nvidia/creatable_vgpu_types")).isEqualTo("ID    : vGPU Name\n");
        assertThat(read("sys/bus/pci/devices/0000:1b:00.5/nvidia/creatable_vgpu_types")).isEqualTo("ID    : vGPU Name\n");
        assertThat(read("sys/bus/pci/devices/0000:1b:00.4/nvidia/current_vgpu_type")).isEqualTo("0\n");
    }

    @Test
    void removingAVfUnlinksItEverywhere() throws IOException {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(3, 100).vfioCdevs(0).create();

        tree.removeFunction("0000:1b:00.5");

        assertThat(exists("sys/bus/pci/devices/0000:1b:00.5")).isFalse();
        assertThat(exists("sys/devices/pci0000:10/0000:10:01.1/0000:1b:00.5")).isFalse();
        assertThat(exists("sys/bus/pci/devices/0000:1b:00.0/virtfn1")).isFalse();
        assertThat(read("sys/bus/pci/devices/0000:1b:00.0/sriov_numvfs")).isEqualTo("2\n");
        assertThat(tree.virtualFunctions("0000:1b:00.0")).containsExactly("0000:1b:00.4", "0000:1b:00.6");
        assertThat(exists("sys/kernel/iommu_groups/101")).isFalse();
        assertThat(exists("dev/vfio/101")).isFalse();
        assertThat(exists("dev/vfio/devices/vfio1")).isFalse();
        assertThat(exists("sys/bus/pci/drivers/nvidia/0000:1b:00.5")).isFalse();
        assertThat(exists("dev/vfio/100")).isTrue();
    }

    @Test
    void removingAPfRemovesItsVfsAndMdevs() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(2, 100).create();
        tree.mdev("aa618089-8b16-4d01-a136-25a0f3c73123", "0000:1b:00.4", "nvidia-1", "GRID T4-1Q", 9);

        tree.removeFunction("0000:1b:00.0");

        assertThat(exists("sys/bus/pci/devices/0000:1b:00.0")).isFalse();
        assertThat(exists("sys/bus/pci/devices/0000:1b:00.4")).isFalse();
        assertThat(exists("sys/bus/mdev/devices/aa618089-8b16-4d01-a136-25a0f3c73123")).isFalse();
        assertThat(exists("dev/vfio/9")).isFalse();
        assertThat(exists("dev/vfio/100")).isFalse();
    }

    @Test
    void sharedGroupSurvivesUntilItsLastMemberLeaves() {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).create();
        tree.function("0000:41:00.1", 0x10de, 0x22e8).pciClass(0x040300).driver("snd_hda_intel").iommuGroup(41).create();

        tree.removeFunction("0000:41:00.0");
        assertThat(exists("dev/vfio/41")).isTrue();
        assertThat(exists("sys/kernel/iommu_groups/41/devices/0000:41:00.1")).isTrue();
        tree.removeFunction("0000:41:00.1");
        assertThat(exists("dev/vfio/41")).isFalse();
    }

    @Test
    void groupNodesAndDriversChangeOnDemand() throws IOException {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).create();

        tree.removeGroupNode(41);
        assertThat(exists("dev/vfio/41")).isFalse();
        tree.addGroupNode(41);
        assertThat(exists("dev/vfio/41")).isTrue();

        tree.bindDriver("0000:41:00.0", "nvidia");
        assertThat(link("sys/bus/pci/devices/0000:41:00.0/driver")).endsWith("/drivers/nvidia");
        assertThat(exists("sys/bus/pci/drivers/vfio-pci/0000:41:00.0")).isFalse();
        tree.bindDriver("0000:41:00.0", null);
        assertThat(exists("sys/bus/pci/devices/0000:41:00.0/driver")).isFalse();
    }

    @Test
    void recreatingAFunctionReplacesIt() throws IOException {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).vfioCdev("vfio3").create();
        tree.passthroughGpu("0000:41:00.0", 0x2335).driver("nvgrace_gpu_vfio_pci").iommuGroup(42).create();

        assertThat(link("sys/bus/pci/devices/0000:41:00.0/iommu_group")).endsWith("/42");
        assertThat(link("sys/bus/pci/devices/0000:41:00.0/driver")).endsWith("/nvgrace_gpu_vfio_pci");
        assertThat(exists("dev/vfio/41")).isFalse();
        assertThat(exists("dev/vfio/devices/vfio3")).isFalse();
        assertThat(exists("sys/bus/pci/devices/0000:41:00.0/vfio-dev")).isFalse();
    }

    @Test
    void egmAndIommufdNodes() throws IOException {
        tree.iommufd().egm(4, "0009:01:00.0", "0019:01:00.0");

        assertThat(exists("dev/iommu")).isTrue();
        assertThat(read("sys/class/egm/egm4/gpu_devices")).isEqualTo("0009:01:00.0 0019:01:00.0\n");
        assertThat(exists("dev/egm4")).isTrue();
    }

    @Test
    void rawWritesAllowAnything() throws IOException {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).create();

        tree.writeAttribute("0000:41:00.0", "vendor", "")
                .symlink("sys/bus/pci/devices/0000:41:00.0/driver", "../../../../bus/pci/drivers/gone")
                .writeFile("sys/bus/pci/devices/0000:99:00.0", new byte[] {(byte) 0xff})
                .mkdirs("sys/bus/mdev/devices");

        assertThat(read("sys/bus/pci/devices/0000:41:00.0/vendor")).isEmpty();
        assertThat(link("sys/bus/pci/devices/0000:41:00.0/driver")).endsWith("/gone");
        assertThat(Files.exists(tree.path("sys/bus/pci/devices/0000:41:00.0/driver"))).isFalse();
        assertThat(Files.readAllBytes(tree.path("sys/bus/pci/devices/0000:99:00.0"))).containsExactly(0xff);
        tree.delete("sys/bus");
        assertThat(exists("sys/bus")).isFalse();
        assertThat(exists("sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0/vendor")).isTrue();
    }

    @Test
    void hostUsesTheRoot() {
        assertThat(tree.host().root()).isEqualTo(tree.root());
    }
}
