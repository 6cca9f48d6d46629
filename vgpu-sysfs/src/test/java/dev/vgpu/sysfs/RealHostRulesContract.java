package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.Device;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.Discovery;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What real hosts add to the simple layouts (docs/HOST-FACTS.md §1d, §1e): an IOMMU group is advertised only when
 * viable and then as one device, an SR-IOV VF on vfio-pci is no whole GPU, and an mdev is ours only on an NVIDIA
 * parent.
 */
abstract class RealHostRulesContract extends SourceTestBase {

    static final String GPU = "0000:65:00.0";
    static final String AUDIO = "0000:65:00.1";
    static final String USB = "0000:65:00.2";
    static final String BRIDGE = "0000:64:00.0";
    static final int GROUP = 65;
    static final int DISPLAY_3D = 0x030200;
    static final int DISPLAY_VGA = 0x030000;
    static final int HD_AUDIO = 0x040300;
    static final int USB_XHCI = 0x0c0330;

    /** An H200 on vfio-pci in group 65, and its audio and USB-C functions in the same group on {@code driver}. */
    void gpuWithSiblings(String audioDriver, String usbDriver) {
        tree.passthroughGpu(GPU, 0x2335).iommuGroup(GROUP).numa(0).create();
        tree.function(AUDIO, 0x10de, 0x22e8).pciClass(HD_AUDIO).driver(audioDriver).iommuGroup(GROUP).create();
        tree.function(USB, 0x10de, 0x1ad8).pciClass(USB_XHCI).driver(usbDriver).iommuGroup(GROUP).create();
    }

    // ---- viability -----------------------------------------------------------------------------------------

    @ParameterizedTest(name = "a group member on {0} makes the group not viable")
    @CsvSource(value = {"snd_hda_intel|bound to snd_hda_intel", "nvidia|bound to nvidia", "|no driver"},
            delimiter = '|')
    void aGroupWithAFunctionOutsideVfioSkipsEveryNvidiaVfioFunctionNamingIt(String driver, String words) {
        gpuWithSiblings(driver, "vfio-pci");

        Discovery found = scan(PASSTHROUGH);

        assertThat(found.devices()).isEmpty();
        assertThat(skips(found)).containsOnlyKeys(GPU, USB).allSatisfy((id, reason) -> assertThat(reason)
                .contains(id, "IOMMU group 65", "not viable", AUDIO, words));
    }

    @Test
    void aDanglingDriverLinkInTheGroupCountsAsNoDriver() {
        gpuWithSiblings("vfio-pci", "vfio-pci");
        tree.symlink("sys/bus/pci/devices/" + AUDIO + "/driver", "../../../../bus/pci/drivers/gone");

        assertThat(skips(scan(PASSTHROUGH))).containsOnlyKeys(GPU, USB).allSatisfy((id, reason) ->
                assertThat(reason).contains(AUDIO, "no driver"));
    }

    @Test
    void anotherVendorsFunctionOutsideVfioSpoilsTheGroupToo() {
        tree.passthroughGpu(GPU, 0x2335).iommuGroup(GROUP).create();
        tree.function("0000:65:00.3", 0x15b3, 0x101d).pciClass(0x020000).driver("mlx5_core").iommuGroup(GROUP)
                .create();

        assertThat(scan(PASSTHROUGH).devices()).isEmpty();
        assertThat(skips(scan(PASSTHROUGH)).get(GPU)).contains("0000:65:00.3", "mlx5_core");
    }

    @ParameterizedTest(name = "class {0} on {1}: viable {2}")
    @CsvSource(value = {"0x060400|pcieport|true", "0x060401||true", "0x060000||false", "0x068000|pcieport|false"},
            delimiter = '|')
    void onlyPciBridgesMayStayOutsideVfio(String classCode, String driver, boolean viable) {
        gpuWithSiblings("vfio-pci", "vfio-pci");
        tree.function(BRIDGE, 0x1022, 0x14ab).pciClass(Integer.decode(classCode)).driver(driver).iommuGroup(GROUP)
                .create();

        Discovery found = scan(PASSTHROUGH);

        if (viable) {
            assertThat(resources(found)).containsExactly(Map.entry("GH100_H200_SXM_141GB", List.of(GPU)));
            assertThat(skips(found)).containsOnlyKeys(AUDIO, USB);
        } else {
            assertThat(found.devices()).isEmpty();
            assertThat(skips(found)).containsOnlyKeys(GPU, AUDIO, USB).allSatisfy((id, reason) ->
                    assertThat(reason).contains("not viable", BRIDGE));
        }
    }

    // ---- one device per group ------------------------------------------------------------------------------

    @Test
    void aGpuAndItsOwnAudioAndUsbOnVfioAdvertiseTheGpuOnlyAndSkipTheOthersNamingIt() {
        gpuWithSiblings("vfio-pci", "vfio-pci");

        Discovery found = scan(PASSTHROUGH);

        assertThat(resources(found)).containsExactly(Map.entry("GH100_H200_SXM_141GB", List.of(GPU)));
        assertThat(skips(found)).containsOnlyKeys(AUDIO, USB).allSatisfy((id, reason) ->
                assertThat(reason).contains(id, "IOMMU group 65", "advertised as " + GPU));
        assertThat(device(found, GPU).iommuGroup()).contains("65");
    }

    @Test
    void twoGpusInOneGroupAdvertiseTheDisplayFunctionWithTheLowestBdf() {
        // created out of order, so the walk order cannot decide
        tree.passthroughGpu("0000:66:00.0", 0x2335).pciClass(DISPLAY_VGA).iommuGroup(GROUP).create();
        tree.function("0000:64:00.1", 0x10de, 0x22e8).pciClass(HD_AUDIO).driver("vfio-pci").iommuGroup(GROUP)
                .create();
        tree.passthroughGpu(GPU, 0x2335).iommuGroup(GROUP).create();

        Discovery found = scan(PASSTHROUGH);

        assertThat(found.devices()).extracting(Device::id).containsExactly(GPU);
        assertThat(skips(found)).containsOnlyKeys("0000:64:00.1", "0000:66:00.0").allSatisfy((id, reason) ->
                assertThat(reason).contains("advertised as " + GPU));
    }

    @Test
    void aGroupWithoutADisplayFunctionAdvertisesItsLowestBdfNvidiaFunction() {
        tree.function(USB, 0x10de, 0x1ad8).pciClass(USB_XHCI).driver("vfio-pci").iommuGroup(GROUP).create();
        tree.function(AUDIO, 0x10de, 0x22e8).pciClass(HD_AUDIO).driver("vfio-pci").iommuGroup(GROUP).create();
        tree.function("0000:65:00.0", 0x8086, 0x1572).pciClass(0x020000).driver("vfio-pci").iommuGroup(GROUP)
                .create();

        Discovery found = scan(PASSTHROUGH);

        assertThat(resources(found)).containsExactly(Map.entry("GA102_HIGH_DEFINITION_AUDIO_CONTROLLER",
                List.of(AUDIO)));
        assertThat(skips(found)).containsOnlyKeys(USB);
        assertThat(skips(found).get(USB)).contains("advertised as " + AUDIO);
    }

    @Test
    void eachGroupIsDecidedOnItsOwn() {
        gpuWithSiblings("vfio-pci", "vfio-pci");
        tree.passthroughGpu("0000:81:00.0", 0x2335).iommuGroup(81).numa(1).create();
        tree.function("0000:81:00.1", 0x10de, 0x22e8).pciClass(HD_AUDIO).driver("snd_hda_intel").iommuGroup(81)
                .create();
        tree.passthroughGpu("0000:c1:00.0", 0x2236).iommuGroup(97).create();

        Discovery found = scan(PASSTHROUGH);

        assertThat(found.devices()).extracting(Device::id).containsExactly(GPU, "0000:c1:00.0");
        assertThat(skips(found)).containsOnlyKeys(AUDIO, USB, "0000:81:00.0");
    }

    @Test
    void aRecheckSaysChangedWhileTheGroupIsNotViableOrWouldBeAdvertisedAsAnotherFunction() {
        gpuWithSiblings("vfio-pci", "vfio-pci");
        Device gpu = scan(PASSTHROUGH).devices().get(0);
        assertThat(PASSTHROUGH.recheck(host(), gpu).unchanged()).isTrue();

        tree.function(AUDIO, 0x10de, 0x22e8).pciClass(HD_AUDIO).driver("snd_hda_intel").iommuGroup(GROUP).create();
        DeviceCheck spoiled = PASSTHROUGH.recheck(host(), gpu);
        assertThat(spoiled.unchanged()).isFalse();
        assertThat(spoiled.describe(GPU)).contains("viable IOMMU group 65", AUDIO, "snd_hda_intel");

        tree.function(AUDIO, 0x10de, 0x22e8).pciClass(HD_AUDIO).driver("vfio-pci").iommuGroup(GROUP).create();
        assertThat(PASSTHROUGH.recheck(host(), gpu).unchanged()).as("viable again").isTrue();

        tree.passthroughGpu("0000:64:00.0", 0x2335).iommuGroup(GROUP).create();
        assertThat(PASSTHROUGH.recheck(host(), gpu).describe(GPU)).contains("advertised as 0000:64:00.0");
    }

    // ---- bad input -----------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @CsvSource(value = {
        "the audio function has no class; the GPU decides first|audio||" + GPU,
        "the GPU has no class, so it is unknown whether it is the display function|gpu|class is missing|",
        "the GPU's class is garbage|gpu garbage|class is not 0x and six hex digits|",
        "a bridge without a class may be any function|bridge|class is missing|",
        "a function alone in its group needs no class|alone||" + GPU}, delimiter = '|')
    void aMissingOrGarbageClassIsASkipOnlyWhereTheAnswerDependsOnIt(String title, String breakage, String words,
            String advertised) {
        gpuWithSiblings("vfio-pci", "vfio-pci");
        switch (breakage) {
            case "audio" -> tree.delete("sys/bus/pci/devices/" + AUDIO + "/class");
            case "gpu" -> tree.delete("sys/bus/pci/devices/" + GPU + "/class");
            case "gpu garbage" -> tree.writeAttribute(GPU, "class", "0x0302\n");
            case "bridge" -> {
                tree.function(BRIDGE, 0x1022, 0x14ab).driver("pcieport").iommuGroup(GROUP).create();
            }
            case "alone" -> tree.removeFunction(AUDIO).removeFunction(USB).delete("sys/bus/pci/devices/" + GPU
                    + "/class");
            default -> throw new IllegalArgumentException(breakage);
        }

        Discovery found = scan(PASSTHROUGH);

        if (advertised != null) {
            assertThat(found.devices()).extracting(Device::id).containsExactly(advertised);
        } else {
            assertThat(found.devices()).isEmpty();
            assertThat(skips(found)).containsOnlyKeys(GPU, AUDIO, USB).allSatisfy((id, reason) ->
                    assertThat(reason).contains("IOMMU group 65", words));
        }
    }

    @Test
    void aMissingMemberListIsASkipNotAGuess() {
        gpuWithSiblings("vfio-pci", "vfio-pci");
        tree.delete("sys/kernel/iommu_groups/65/devices");

        Discovery found = scan(PASSTHROUGH);

        assertThat(found.devices()).isEmpty();
        assertThat(skips(found)).containsOnlyKeys(GPU, AUDIO, USB).allSatisfy((id, reason) ->
                assertThat(reason).contains("IOMMU group 65", "sys/kernel/iommu_groups/65/devices is missing"));
    }

    @ParameterizedTest(name = "a member link {0}")
    @CsvSource(value = {
        "to a function that is gone|0000:65:00.3|../../../../devices/pci0000:60/0000:60:01.1/0000:65:00.3|vanished",
        "named like no PCI function|platform-smmu|../../../../devices/platform/smmu|not a PCI function"},
            delimiter = '|')
    void aMemberThatCannotBeReadMakesTheGroupNotViable(String title, String member, String linkText, String words) {
        gpuWithSiblings("vfio-pci", "vfio-pci");
        tree.symlink("sys/kernel/iommu_groups/65/devices/" + member, linkText);

        Discovery found = scan(PASSTHROUGH);

        assertThat(found.devices()).isEmpty();
        assertThat(skips(found)).containsOnlyKeys(GPU, AUDIO, USB).allSatisfy((id, reason) ->
                assertThat(reason).contains("IOMMU group 65", member, words));
    }

    @Test
    void aFunctionItsGroupDoesNotListIsASkip() {
        tree.function(AUDIO, 0x10de, 0x22e8).pciClass(HD_AUDIO).driver("vfio-pci").iommuGroup(GROUP).create();
        tree.passthroughGpu(GPU, 0x2335).iommuGroup(GROUP).create();
        tree.delete("sys/kernel/iommu_groups/65/devices/" + GPU);

        Discovery found = scan(PASSTHROUGH);

        assertThat(found.devices()).extracting(Device::id).containsExactly(AUDIO);
        assertThat(skips(found).get(GPU)).contains("IOMMU group 65", "does not list it");
    }

    // ---- SR-IOV virtual functions --------------------------------------------------------------------------

    @Test
    void anSriovVirtualFunctionOnVfioPciIsNoWholeGpu() {
        tree.sriovCard("0000:41:00.0", 0x2335).virtualFunctions(2, 100).create();
        tree.bindDriver("0000:41:00.4", "vfio-pci");
        tree.passthroughGpu(GPU, 0x2335).iommuGroup(GROUP).create();

        Discovery found = scan(PASSTHROUGH);

        assertThat(found.devices()).extracting(Device::id).containsExactly(GPU);
        assertThat(skips(found)).containsOnlyKeys("0000:41:00.4");
        assertThat(skips(found).get("0000:41:00.4")).contains("SR-IOV virtual function", "physfn → 0000:41:00.0",
                "vfio-pci", "not a whole GPU");
        assertThat(scan(VENDOR).devices()).isEmpty();
    }

    // ---- mdev parents --------------------------------------------------------------------------------------

    @Test
    void anMdevOnAnotherVendorsParentIsNotOursAndAnNvidiaMdevStillIs() {
        tree.function("0000:00:02.0", 0x8086, 0x3e92).pciClass(DISPLAY_VGA).driver("i915").create();
        tree.mdev(PassthroughAndMdevContract.UUID2, "0000:00:02.0", "i915-GVTg_V5_4", "GVTg_V5_4", 3);
        tree.nvidiaGpu("0000:06:00.0", 0x2236).create();
        tree.mdev(PassthroughAndMdevContract.UUID1, "0000:06:00.0", "nvidia-558", "NVIDIA A10-8Q", 7);

        Discovery found = scan(MDEV);

        assertThat(resources(found)).containsExactly(Map.entry("NVIDIA_A10-8Q",
                List.of(PassthroughAndMdevContract.UUID1)));
        assertThat(found.skipped()).isEmpty();
    }

    @Test
    void anMdevWhoseParentVendorCannotBeReadIsASkip() {
        tree.nvidiaGpu("0000:06:00.0", 0x2236).create();
        tree.mdev(PassthroughAndMdevContract.UUID1, "0000:06:00.0", "nvidia-558", "NVIDIA A10-8Q", 7);
        tree.writeAttribute("0000:06:00.0", "vendor", "nvidia\n");

        Discovery found = scan(MDEV);

        assertThat(found.devices()).isEmpty();
        assertThat(skips(found).get(PassthroughAndMdevContract.UUID1)).contains("0000:06:00.0", "vendor");
    }
}
