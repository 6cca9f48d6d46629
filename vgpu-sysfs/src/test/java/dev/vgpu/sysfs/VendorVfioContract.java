package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import dev.vgpu.testing.SysfsTree;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The vendor-specific VFIO scenarios of the issue, on any file system. */
@Tag("reliability")
abstract class VendorVfioContract extends SourceTestBase {

    static final Map<Long, String> H200 = Map.of(1428L, "NVIDIA H200X-141C", 1414L, "NVIDIA H200X-1-18C",
            1415L, "NVIDIA H200X-2-35C");

    /** Two H200 cards, four VFs each, with a mix of profiles configured. */
    void twoH200Cards() {
        tree.sriovCard("0000:1b:00.0", 0x2335).numa(0).virtualFunctions(4, 100).vfioCdevs(10).catalog(H200).create();
        tree.sriovCard("0000:3b:00.0", 0x2335).numa(1).virtualFunctions(4, 200).vfioCdevs(20).catalog(H200).create();
        tree.configureVf("0000:1b:00.4", 1414).configureVf("0000:1b:00.5", 1414).configureVf("0000:1b:00.6", 1428)
                .configureVf("0000:3b:00.4", 1414).configureVf("0000:3b:00.5", 1415);
    }

    @Test
    void twoCardHostGroupsVfsByProfileAcrossCards() {
        twoH200Cards();

        Discovery found = scan(VENDOR);

        assertThat(resources(found)).containsExactly(
                Map.entry("NVIDIA_H200X-1-18C", List.of("0000:1b:00.4", "0000:1b:00.5", "0000:3b:00.4")),
                Map.entry("NVIDIA_H200X-141C", List.of("0000:1b:00.6")),
                Map.entry("NVIDIA_H200X-2-35C", List.of("0000:3b:00.5")));
        assertThat(found.skipped()).isEmpty();
        Device vf = device(found, "0000:3b:00.5");
        assertThat(vf.attachment()).isEqualTo(Attachment.VFIO_PCI);
        assertThat(vf.source()).isEqualTo("vendor-vfio");
        assertThat(vf.parent()).contains(PciAddress.parse("0000:3b:00.0"));
        assertThat(vf.iommuGroup()).contains("201");
        assertThat(vf.numaNode()).hasValue(1);
        assertThat(vf.vfioCdev()).contains("vfio21");
    }

    @Test
    void aVfCarriesTheGpuInstanceItsFileNamesAndNothingForAnythingButADecimalId() {
        twoH200Cards();
        tree.writeAttribute("0000:1b:00.4", "nvidia/gpu_instance_id", "3\n");
        tree.writeAttribute("0000:1b:00.5", "nvidia/gpu_instance_id", "-1\n");
        tree.writeAttribute("0000:1b:00.6", "nvidia/gpu_instance_id", "\n");
        tree.writeAttribute("0000:3b:00.4", "nvidia/gpu_instance_id", "4294967295\n");

        Discovery found = scan(VENDOR);

        assertThat(device(found, "0000:1b:00.4").gpuInstance()).hasValue(3);
        for (String other : List.of("0000:1b:00.5", "0000:1b:00.6", "0000:3b:00.4", "0000:3b:00.5")) {
            assertThat(device(found, other).gpuInstance()).as(other).isEmpty();
        }
        assertThat(found.skipped()).isEmpty();
    }

    @Test
    void pfsAndVfsOnNvidiaAreNeverPassthroughDevices() {
        twoH200Cards();

        assertThat(scan(PASSTHROUGH).devices()).isEmpty();
        assertThat(scan(PASSTHROUGH).skipped()).isEmpty();
        assertThat(scan(MDEV).devices()).isEmpty();
        assertThat(scan(VENDOR).devices()).extracting(Device::id).doesNotContain("0000:1b:00.0", "0000:3b:00.0");
    }

    @Test
    void aPfWithItsVfsDisabledIsOneSkipSayingHowToEnableThemOrBindItToVfio() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(0, 100).totalVfs(16).catalog(H200).create();

        for (var source : List.of(PASSTHROUGH, MDEV)) {
            assertThat(scan(source).skipped()).isEmpty();
        }
        Discovery found = scan(VENDOR);
        assertThat(found.devices()).isEmpty();
        assertThat(skips(found)).containsOnlyKeys("0000:1b:00.0");
        assertThat(skips(found).get("0000:1b:00.0")).contains("bound to nvidia", "no VFs enabled",
                "sriov-manage -e 0000:1b:00.0", "vfio-pci");
    }

    @Test
    void unconfiguredVfsAreNeitherAdvertisedNorSkipped() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(4, 100).catalog(H200).create();
        tree.configureVf("0000:1b:00.5", 1428).writeAttribute("0000:1b:00.6", "nvidia/current_vgpu_type", "\n");

        Discovery found = scan(VENDOR);

        assertThat(resources(found)).containsOnlyKeys("NVIDIA_H200X-141C");
        assertThat(found.skipped()).isEmpty();
    }

    @Test
    void fullyConsumedCardIsSkippedWithoutAResolver() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(2, 100).catalog(H200).create();
        tree.configureVf("0000:1b:00.4", 1428).configureVf("0000:1b:00.5", 1414)
                .rewriteCardCatalogs("0000:1b:00.0", Map.of());

        Discovery found = scan(VENDOR);

        assertThat(found.devices()).isEmpty();
        assertThat(skips(found)).containsOnlyKeys("0000:1b:00.4", "0000:1b:00.5");
        assertThat(skips(found).get("0000:1b:00.4")).contains("0000:1b:00.4", "1428", "0000:1b:00.0", "resolver",
                "NVML not in use");
    }

    @Test
    void fullyConsumedCardIsNamedByTheResolverAskedOncePerPf() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(3, 100).create();
        tree.sriovCard("0000:3b:00.0", 0x2335).virtualFunctions(3, 200).create();
        for (String vf : List.of("0000:1b:00.4", "0000:1b:00.5", "0000:1b:00.6", "0000:3b:00.4", "0000:3b:00.5")) {
            tree.configureVf(vf, 1414);
        }
        CountingResolver nvml = new CountingResolver(Map.of("0000:1b:00.0", Map.of(1414L, "NVIDIA H200X-1-18C"),
                "0000:3b:00.0", Map.of(1414L, "NVIDIA H200X-1-18C")));
        Host host = host().withVgpuTypes(nvml);

        Discovery first = scan(VENDOR, host);

        assertThat(resources(first)).containsExactly(Map.entry("NVIDIA_H200X-1-18C",
                List.of("0000:1b:00.4", "0000:1b:00.5", "0000:1b:00.6", "0000:3b:00.4", "0000:3b:00.5")));
        assertThat(nvml.asked).containsExactlyInAnyOrder(PciAddress.parse("0000:1b:00.0"),
                PciAddress.parse("0000:3b:00.0"));
        scan(VENDOR, host);
        assertThat(nvml.asked).hasSize(4);
    }

    @Test
    void resolverIsNotAskedWhenTheCardsCatalogsSuffice() {
        twoH200Cards();
        CountingResolver nvml = new CountingResolver(Map.of());

        scan(VENDOR, host().withVgpuTypes(nvml));

        assertThat(nvml.asked).isEmpty();
    }

    @Test
    void catalogFoundOnlyOnASiblingVfNamesTheType() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(3, 100).catalogOnPf(false).create();
        tree.configureVf("0000:1b:00.4", 1428).rewriteCatalog("0000:1b:00.6", Map.of(1428L, "NVIDIA H200X-141C"));

        Discovery found = scan(VENDOR);

        assertThat(resources(found)).containsExactly(Map.entry("NVIDIA_H200X-141C", List.of("0000:1b:00.4")));
    }

    @Test
    void catalogOnThePfAloneNamesTheType() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(2, 100).create();
        tree.configureVf("0000:1b:00.5", 1428).rewriteCatalog("0000:1b:00.0", Map.of(1428L, "NVIDIA H200X-141C"));

        assertThat(resources(scan(VENDOR))).containsOnlyKeys("NVIDIA_H200X-141C");
    }

    @Test
    void sameTypeIdNamesDifferentProfilesOnTwoCards() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(2, 100).catalog(Map.of(1428L, "NVIDIA H200X-141C"))
                .create();
        tree.sriovCard("0000:3b:00.0", 0x26b9).virtualFunctions(2, 200).catalog(Map.of(1428L, "NVIDIA L40S-48Q"))
                .create();
        tree.configureVf("0000:1b:00.4", 1428).configureVf("0000:3b:00.4", 1428);

        assertThat(resources(scan(VENDOR))).containsExactly(
                Map.entry("NVIDIA_H200X-141C", List.of("0000:1b:00.4")),
                Map.entry("NVIDIA_L40S-48Q", List.of("0000:3b:00.4")));
    }

    @Test
    void idListedOnlyByAnotherCardIsSkipped() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(2, 100).catalog(Map.of(1428L, "NVIDIA H200X-141C"))
                .create();
        tree.sriovCard("0000:3b:00.0", 0x2335).virtualFunctions(2, 200).create();
        tree.configureVf("0000:3b:00.4", 1428);
        CountingResolver nvml = new CountingResolver(Map.of("0000:3b:00.0", Map.of(1414L, "NVIDIA H200X-1-18C")));

        Discovery found = scan(VENDOR, host().withVgpuTypes(nvml));

        assertThat(found.devices()).isEmpty();
        assertThat(skips(found)).containsOnlyKeys("0000:3b:00.4");
        assertThat(skips(found).get("0000:3b:00.4")).contains("1428", "0000:3b:00.0");
        assertThat(nvml.asked).containsExactly(PciAddress.parse("0000:3b:00.0"));
    }

    @Test
    void idNamedTwiceDifferentlyOnOneCardIsAmbiguous() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(3, 100).catalog(Map.of(1428L, "NVIDIA H200X-141C"))
                .create();
        tree.rewriteCatalog("0000:1b:00.6", Map.of(1428L, "NVIDIA H200X-1-18C")).configureVf("0000:1b:00.4", 1428);
        CountingResolver nvml = new CountingResolver(Map.of("0000:1b:00.0", Map.of(1428L, "NVIDIA H200X-141C")));

        Discovery found = scan(VENDOR, host().withVgpuTypes(nvml));

        assertThat(found.devices()).isEmpty();
        assertThat(skips(found).get("0000:1b:00.4")).contains("ambiguous", "1428", "NVIDIA H200X-141C",
                "NVIDIA H200X-1-18C");
    }

    @Test
    void paddingDifferencesAreNotAConflict() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(2, 100).catalog(Map.of(1428L, "NVIDIA H200X-141C"))
                .create();
        tree.writeAttribute("0000:1b:00.5", "nvidia/creatable_vgpu_types", "ID : vGPU Name\r\n1428 :  NVIDIA   H200X-141C  \r\n")
                .configureVf("0000:1b:00.4", 1428);

        assertThat(resources(scan(VENDOR))).containsOnlyKeys("NVIDIA_H200X-141C");
    }

    @Test
    void resolverAnswersWithWhitespaceAreNamedLikeCatalogs() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(1, 100).create();
        tree.configureVf("0000:1b:00.4", 7);
        CountingResolver nvml = new CountingResolver(Map.of("0000:1b:00.0",
                Map.of(7L, "NVIDIA RTX Pro 6000 Blackwell DC-1-2Q")));

        Discovery found = scan(VENDOR, host().withVgpuTypes(nvml));

        assertThat(resources(found)).containsOnlyKeys("NVIDIA_RTX_Pro_6000_Blackwell_DC-1-2Q");
    }

    @Test
    void aThrowingResolverBecomesASkipReason() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(1, 100).create();
        tree.configureVf("0000:1b:00.4", 7);

        Discovery found = scan(VENDOR, host().withVgpuTypes(pf -> {
            throw new IllegalStateException("NVML exploded");
        }));

        assertThat(skips(found).get("0000:1b:00.4")).contains("NVML exploded", "7");
    }

    @Test
    void numaUnknownIsOmittedAndNoCdevIsFine() {
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(1, 100).catalog(H200).create();
        tree.configureVf("0000:1b:00.4", 1428);

        Device vf = device(scan(VENDOR), "0000:1b:00.4");

        assertThat(vf.numaNode()).isEqualTo(OptionalInt.empty());
        assertThat(vf.vfioCdev()).isEqualTo(Optional.empty());
        assertThat(vf.iommuGroup()).contains("100");
    }

    @Test
    void rescanSeesConfigurationChanges() {
        twoH200Cards();
        scan(VENDOR);

        tree.unconfigureVf("0000:1b:00.6").configureVf("0000:1b:00.7", 1415).removeFunction("0000:3b:00.5");
        tree.sriovCard("0000:5b:00.0", 0x2335).virtualFunctions(1, 300).catalog(H200).create();
        tree.configureVf("0000:5b:00.4", 1428);

        assertThat(resources(scan(VENDOR))).containsExactly(
                Map.entry("NVIDIA_H200X-1-18C", List.of("0000:1b:00.4", "0000:1b:00.5", "0000:3b:00.4")),
                Map.entry("NVIDIA_H200X-141C", List.of("0000:5b:00.4")),
                Map.entry("NVIDIA_H200X-2-35C", List.of("0000:1b:00.7")));
    }

    @Test
    void vfsVanishingAndReturningMidScanNeverBreakAScan() throws Exception {
        tree.mkdirs("sys/bus/pci/devices");
        Host host = host();
        ExecutorService writer = Executors.newSingleThreadExecutor();
        try {
            // the writer thread owns the tree from here on; this thread only scans
            Future<?> churn = writer.submit(() -> {
                for (int i = 0; i < 25; i++) {
                    tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(6, 100).catalog(H200).create();
                    for (int vf = 0; vf < 6; vf++) {
                        tree.configureVf(SysfsTree.vfAddress("0000:1b:00.0", vf), 1428);
                    }
                    tree.removeFunction(SysfsTree.vfAddress("0000:1b:00.0", i % 6));
                    tree.removeFunction("0000:1b:00.0");
                }
            });
            int scans = 0;
            while (!churn.isDone() || scans == 0) {
                for (var source : ALL) {
                    Discovery found = source.discover(host);
                    assertThat(found.devices()).allSatisfy(d -> assertThat(d.resource().name())
                            .isEqualTo("NVIDIA_H200X-141C"));
                }
                scans++;
            }
            churn.get();
        } finally {
            writer.shutdownNow();
        }
    }
}
