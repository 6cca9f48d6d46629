package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.PciIds;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Identity over time: what each built-in source records, how {@code recheck} compares it with the host now, the
 * card-local memory of profile names, and names that collide once cut to 63 characters.
 */
class IdentityAndNamesTest extends SourceTestBase {

    static final Map<Long, String> L40S = Map.of(1152L, "NVIDIA L40S-1Q", 1153L, "NVIDIA L40S-2Q",
            1155L, "NVIDIA L40S-4Q");

    @Override
    Path newRoot() {
        return tempDir.resolve("host");
    }

    @Test
    void aVfRecordsItsTypeAndTheRecheckSeesItReconfiguredOrDestroyed() {
        tree.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(2, 100).catalog(L40S).create();
        tree.configureVf("0000:1b:00.4", 1152);
        Device vf = device(scan(VENDOR), "0000:1b:00.4");

        assertThat(vf.identity()).contains("vgpu-type:10de:26b9:1152");
        assertThat(VENDOR.recheck(host(), vf)).isEqualTo(DeviceCheck.same());

        tree.configureVf("0000:1b:00.4", 1155);
        assertThat(VENDOR.recheck(host(), vf)).isEqualTo(DeviceCheck.changed("vGPU type 1152", "vGPU type 1155"));

        tree.unconfigureVf("0000:1b:00.4");
        assertThat(VENDOR.recheck(host(), vf).now()).contains("without a vGPU type");

        tree.writeAttribute("0000:1b:00.4", "nvidia/current_vgpu_type", "01152\n");
        assertThat(VENDOR.recheck(host(), vf)).isEqualTo(DeviceCheck.same());

        tree.removeFunction("0000:1b:00.4");
        assertThat(VENDOR.recheck(host(), vf)).isEqualTo(DeviceCheck.changed("vGPU type 1152", "gone"));
    }

    @Test
    void aVfRecheckSeesAnotherVendorOrDeviceAtItsAddress() {
        tree.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(2, 100).catalog(L40S).create();
        tree.configureVf("0000:1b:00.4", 1152);
        Device vf = device(scan(VENDOR), "0000:1b:00.4");

        tree.writeAttribute("0000:1b:00.4", "vendor", "0x8086\n");
        assertThat(VENDOR.recheck(host(), vf)).isEqualTo(DeviceCheck.changed("vendor 10de", "vendor 8086"));
        assertThat(VENDOR.recheck(host(), vf).describe("0000:1b:00.4")).isEqualTo(
                "device 0000:1b:00.4 was vendor 10de when advertised and is now vendor 8086");

        tree.writeAttribute("0000:1b:00.4", "vendor", "0x10de\n").writeAttribute("0000:1b:00.4", "device", "0x26ba\n");
        assertThat(VENDOR.recheck(host(), vf)).isEqualTo(DeviceCheck.changed("device 26b9", "device 26ba"));

        tree.writeAttribute("0000:1b:00.4", "vendor", "0x8086\n").configureVf("0000:1b:00.4", 1155);
        assertThat(VENDOR.recheck(host(), vf)).isEqualTo(DeviceCheck.changed(
                "vendor 10de, device 26b9, vGPU type 1152", "vendor 8086, device 26ba, vGPU type 1155"));

        tree.writeAttribute("0000:1b:00.4", "vendor", "garbage\n");
        assertThat(VENDOR.recheck(host(), vf).was()).isEqualTo("vendor 10de");
        assertThat(VENDOR.recheck(host(), vf).now()).startsWith("unreadable (").contains("vendor");

        tree.writeAttribute("0000:1b:00.4", "vendor", "0x10DE\n").writeAttribute("0000:1b:00.4", "device", "0x26B9\n")
                .configureVf("0000:1b:00.4", 1152);
        assertThat(VENDOR.recheck(host(), vf)).isEqualTo(DeviceCheck.same());
    }

    @Test
    void aVfIdentityOfTheTypeOnlyFormIsCheckedOnItsType() {
        tree.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(1, 100).catalog(L40S).create();
        tree.configureVf("0000:1b:00.4", 1152);
        Device vf = device(scan(VENDOR), "0000:1b:00.4");
        Device typeOnly = new Device(vf.id(), vf.resource(), vf.source(), vf.attachment(), vf.parent(),
                vf.iommuGroup(), vf.numaNode(), vf.vfioCdev(), java.util.Optional.of("vgpu-type:1152"));

        tree.writeAttribute("0000:1b:00.4", "vendor", "0x8086\n");
        assertThat(VENDOR.recheck(host(), typeOnly)).isEqualTo(DeviceCheck.same());
        tree.configureVf("0000:1b:00.4", 1153);
        assertThat(VENDOR.recheck(host(), typeOnly)).isEqualTo(DeviceCheck.changed("vGPU type 1152", "vGPU type 1153"));
    }

    @Test
    void anMdevRecordsItsTypeAndTheRecheckSeesItRetypedOrRemoved() {
        String uuid = "aa618089-8b16-4d01-a136-25a0f3c73123";
        tree.nvidiaGpu("0000:41:00.0", 0x2236).create();
        tree.mdev(uuid, "0000:41:00.0", "nvidia-558", "NVIDIA A10-1Q", 30);
        Device mdev = device(scan(MDEV), uuid);

        assertThat(mdev.identity()).contains("mdev-type:nvidia-558");
        assertThat(MDEV.recheck(host(), mdev)).isEqualTo(DeviceCheck.same());

        tree.removeMdev(uuid).mdev(uuid, "0000:41:00.0", "nvidia-560", "NVIDIA A10-4Q", 30);
        assertThat(MDEV.recheck(host(), mdev)).isEqualTo(DeviceCheck.changed("mdev type nvidia-558",
                "mdev type nvidia-560"));

        tree.removeMdev(uuid);
        assertThat(MDEV.recheck(host(), mdev)).isEqualTo(DeviceCheck.changed("mdev type nvidia-558", "gone"));
    }

    @Test
    void aPassthroughGpuRecordsItsIdsAndTheRecheckSeesAnotherDeviceThere() {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).create();
        Device gpu = device(scan(PASSTHROUGH), "0000:41:00.0");

        assertThat(gpu.identity()).contains("pci:10de:2335");
        assertThat(PASSTHROUGH.recheck(host(), gpu)).isEqualTo(DeviceCheck.same());

        tree.writeAttribute("0000:41:00.0", "device", "0x2331\n");
        assertThat(PASSTHROUGH.recheck(host(), gpu)).isEqualTo(DeviceCheck.changed("PCI device 10de:2335",
                "PCI device 10de:2331"));
        tree.writeAttribute("0000:41:00.0", "device", "garbage\n");
        assertThat(PASSTHROUGH.recheck(host(), gpu).now()).startsWith("unreadable (");
    }

    @Test
    void aFullCardKeepsTheNamesItsCatalogsGaveEarlierOnThatCardOnly() {
        tree.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(3, 100).catalog(L40S).create();
        tree.sriovCard("0000:3b:00.0", 0x26b9).virtualFunctions(1, 200).catalog(Map.of()).create();
        VendorVfioSource source = new VendorVfioSource();
        tree.configureVf("0000:1b:00.4", 1153).configureVf("0000:1b:00.5", 1153);
        assertThat(resources(scan(source, host()))).containsOnlyKeys("NVIDIA_L40S-2Q");

        // The last VF is configured: every catalog of the card drops to its header.
        tree.configureVf("0000:1b:00.6", 1155).rewriteCardCatalogs("0000:1b:00.0", Map.of());
        // The other card never listed anything: it must not borrow the first card's names.
        tree.configureVf("0000:3b:00.4", 1153);
        Discovery full = scan(source, host());

        assertThat(resources(full)).containsExactly(
                Map.entry("NVIDIA_L40S-2Q", List.of("0000:1b:00.4", "0000:1b:00.5")),
                Map.entry("NVIDIA_L40S-4Q", List.of("0000:1b:00.6")));
        assertThat(skips(full)).containsOnlyKeys("0000:3b:00.4");
        // A fresh source has learned nothing: the full card cannot be named.
        assertThat(scan(new VendorVfioSource(), host()).devices()).isEmpty();
    }

    @Test
    void aCatalogNamingATypeDifferentlyWinsOverTheMemory() {
        tree.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(2, 100).catalog(L40S).create();
        VendorVfioSource source = new VendorVfioSource();
        tree.configureVf("0000:1b:00.4", 1152);
        scan(source, host());

        tree.rewriteCardCatalogs("0000:1b:00.0", Map.of(1152L, "NVIDIA L40S-1B"));
        assertThat(resources(scan(source, host()))).containsOnlyKeys("NVIDIA_L40S-1B");

        tree.rewriteCardCatalogs("0000:1b:00.0", Map.of());
        assertThat(resources(scan(source, host()))).containsOnlyKeys("NVIDIA_L40S-1B");
    }

    @Test
    void aCardThatLeavesIsForgotten() {
        tree.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(2, 100).catalog(L40S).create();
        VendorVfioSource source = new VendorVfioSource();
        tree.configureVf("0000:1b:00.4", 1152);
        scan(source, host());

        tree.removeFunction("0000:1b:00.4").removeFunction("0000:1b:00.5").removeFunction("0000:1b:00.0");
        assertThat(scan(source, host()).devices()).isEmpty();
        tree.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(2, 100).catalog(Map.of()).create();
        tree.configureVf("0000:1b:00.4", 1152);

        Discovery back = scan(source, host());
        assertThat(back.devices()).isEmpty();
        assertThat(skips(back).get("0000:1b:00.4")).contains("no name was learned for it on this card earlier");
    }

    @Test
    void aFailingResolverIsNotUnknownAndTheMemoryBridgesIt() {
        tree.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(2, 100).catalog(Map.of()).create();
        tree.configureVf("0000:1b:00.4", 1152).configureVf("0000:1b:00.5", 1155);
        AtomicReference<VgpuTypeNames> answer = new AtomicReference<>(VgpuTypeNames.failed("NVML_ERROR_GPU_IS_LOST"));
        VgpuTypeResolver nvml = pf -> answer.get();
        Host host = host().withVgpuTypes(nvml);
        VendorVfioSource source = new VendorVfioSource();

        Discovery failed = scan(source, host);
        assertThat(failed.devices()).isEmpty();
        assertThat(skips(failed).get("0000:1b:00.4")).contains("it failed: NVML_ERROR_GPU_IS_LOST")
                .contains("retried at the next scan");

        answer.set(VgpuTypeNames.of(L40S));
        assertThat(resources(scan(source, host))).containsOnlyKeys("NVIDIA_L40S-1Q", "NVIDIA_L40S-4Q");

        answer.set(VgpuTypeNames.failed("NVML_ERROR_GPU_IS_LOST"));
        assertThat(resources(scan(source, host))).containsOnlyKeys("NVIDIA_L40S-1Q", "NVIDIA_L40S-4Q");

        answer.set(VgpuTypeNames.unavailable("NVML not in use"));
        assertThat(resources(scan(new VendorVfioSource(), host))).isEmpty();
    }

    @Test
    void twoProfilesThatCutToOneNameAreNeverOneResource() {
        String stem = "NVIDIA " + "X".repeat(60);
        tree.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(3, 100)
                .catalog(Map.of(1L, stem + "-1Q", 2L, stem + "-2Q", 3L, "NVIDIA L40S-1Q")).create();
        tree.configureVf("0000:1b:00.4", 1).configureVf("0000:1b:00.5", 2).configureVf("0000:1b:00.6", 3);

        Discovery found = scan(VENDOR);

        assertThat(resources(found)).containsOnlyKeys("NVIDIA_L40S-1Q");
        assertThat(skips(found)).containsOnlyKeys("0000:1b:00.4", "0000:1b:00.5");
        assertThat(skips(found).get("0000:1b:00.4")).contains(stem + "-1Q").contains(stem + "-2Q")
                .contains("cut to 63 characters");
    }

    @Test
    void twoMdevTypesThatCutToOneNameAreNeverOneResource() {
        String stem = "GRID " + "Y".repeat(62);
        tree.nvidiaGpu("0000:41:00.0", 0x2236).create();
        tree.mdev("aa618089-8b16-4d01-a136-25a0f3c73123", "0000:41:00.0", "nvidia-1", stem + "-1Q", 30);
        tree.mdev("bb618089-8b16-4d01-a136-25a0f3c73123", "0000:41:00.0", "nvidia-2", stem + "-2Q", 31);
        tree.mdev("cc618089-8b16-4d01-a136-25a0f3c73123", "0000:41:00.0", "nvidia-3", stem + "-1Q", 32);

        Discovery found = scan(MDEV);

        assertThat(found.devices()).isEmpty();
        assertThat(skips(found)).hasSize(3);
    }

    @Test
    void theSameProfileOnTwoCardsIsOneResource() {
        tree.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(1, 100).catalog(L40S).create();
        tree.sriovCard("0000:3b:00.0", 0x26b9).virtualFunctions(1, 200).catalog(Map.of(1160L, "NVIDIA  L40S-1Q"))
                .create();
        tree.configureVf("0000:1b:00.4", 1152).configureVf("0000:3b:00.4", 1160);

        assertThat(resources(scan(VENDOR))).containsExactly(
                Map.entry("NVIDIA_L40S-1Q", List.of("0000:1b:00.4", "0000:3b:00.4")));
        assertThat(device(scan(VENDOR), "0000:3b:00.4").parent()).contains(PciAddress.parse("0000:3b:00.0"));
    }
    @Test
    void passthroughIdsThatPciIdsNamesAlikeAreOneResourceEachKeepingItsIdentity() {
        // The upstream rule: the resource is the name, so two device ids of one name share it.
        PciIds names = pciIds("10de  NVIDIA Corporation\n\t2330  GH100 [H100 SXM5 80GB]\n"
                + "\t2324  GH100 [H100 SXM5 80GB]\n");
        tree.passthroughGpu("0000:41:00.0", 0x2330).iommuGroup(41).create();
        tree.passthroughGpu("0000:42:00.0", 0x2324).iommuGroup(42).create();

        Discovery found = scan(PASSTHROUGH, tree.host().withPciIds(names));

        assertThat(resources(found)).containsExactly(
                Map.entry("GH100_H100_SXM5_80GB", List.of("0000:41:00.0", "0000:42:00.0")));
        assertThat(device(found, "0000:41:00.0").identity()).contains("pci:10de:2330");
        assertThat(device(found, "0000:42:00.0").identity()).contains("pci:10de:2324");
    }

    @Test
    void passthroughNamesThatDifferButSanitizeToOneResourceNameStaySkipped() {
        PciIds names = pciIds("10de  NVIDIA Corporation\n\t2330  GH100 [H100]\n\t2324  GH100 (H100)\n");
        tree.passthroughGpu("0000:41:00.0", 0x2330).iommuGroup(41).create();
        tree.passthroughGpu("0000:42:00.0", 0x2324).iommuGroup(42).create();

        Discovery found = scan(PASSTHROUGH, tree.host().withPciIds(names));

        assertThat(found.devices()).isEmpty();
        assertThat(skips(found)).containsOnlyKeys("0000:41:00.0", "0000:42:00.0").allSatisfy((id, reason) ->
                assertThat(reason).contains("GH100 [H100]", "GH100 (H100)", "GH100_H100"));
    }
}
