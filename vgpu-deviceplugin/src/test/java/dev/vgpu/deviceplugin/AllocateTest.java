package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.L40S_1Q;
import static dev.vgpu.deviceplugin.Fixtures.L40S_2Q;
import static dev.vgpu.deviceplugin.Fixtures.T4_1Q;
import static dev.vgpu.deviceplugin.Fixtures.identified;
import static dev.vgpu.deviceplugin.Fixtures.mdev;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static dev.vgpu.deviceplugin.Fixtures.vf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.Snapshot;
import dev.vgpu.kubelet.api.v1beta1.AllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.AllocateResponse;
import dev.vgpu.kubelet.api.v1beta1.ContainerAllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.ContainerAllocateResponse;
import dev.vgpu.kubelet.api.v1beta1.DeviceSpec;
import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.sysfs.PassthroughSource;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Allocate as KubeVirt reads it, over the real socket: env var names and values, DeviceSpecs, iommufd, EGM, and
 * refusals that change nothing.
 */
class AllocateTest {

    private static final String UUID = "aa618089-8b16-4d01-a136-25a0f3c73123";

    @TempDir
    Path tmp;
    Harness h;

    @BeforeEach
    void host() {
        h = Harness.start(tmp);
        // A passthrough H200 with its audio function in group 41, another H200 alone in group 42.
        h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).vfioCdev("vfio3").create();
        h.host.function("0000:41:00.1", 0x10de, 0x22e8).driver("vfio-pci").iommuGroup(41).vfioCdev("vfio4").create();
        h.host.passthroughGpu("0000:42:00.0", 0x2335).iommuGroup(42).numa(1).vfioCdev("vfio5").create();
        // An L40S with two VFs in groups 100 and 101, and a T4 carrying one mdev in group 7.
        h.host.sriovCard("0000:1b:00.0", 0x26b9).numa(0).virtualFunctions(2, 100).vfioCdevs(10).create();
        h.host.configureVf("0000:1b:00.4", 1147).configureVf("0000:1b:00.5", 1148);
        h.host.nvidiaGpu("0000:06:00.0", 0x1eb8).numa(1).create();
        h.host.mdev(UUID, "0000:06:00.0", "nvidia-222", "GRID T4-1Q", 7);
        h.apply(advertised());
        h.await(k -> k.resources().size() == 4);
    }

    /** What the built-in sources would advertise for the tree above, identities included. */
    private static Snapshot advertised() {
        return snapshot(identified(passthrough("0000:41:00.0", 41, 0), "pci:10de:2335"),
                identified(passthrough("0000:42:00.0", 42, 1), "pci:10de:2335"),
                identified(vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0", 100, 0), "vgpu-type:1147"),
                identified(vf(L40S_2Q, "0000:1b:00.5", "0000:1b:00.0", 101, 0), "vgpu-type:1148"),
                identified(mdev(UUID, "0000:06:00.0", 7, 1), "mdev-type:nvidia-222"));
    }

    @AfterEach
    void close() {
        h.close();
    }

    @Test
    void passthroughGetsItsBdfAndTheVfioContainerAndGroupNodes() {
        ContainerAllocateResponse r = only(h.kubelet.allocate(H200.fullName(), List.of("0000:41:00.0")));

        assertThat(r.getEnvsMap()).isEqualTo(Map.of("PCI_RESOURCE_NVIDIA_COM_GH100_H200_SXM_141GB", "0000:41:00.0"));
        assertThat(paths(r)).containsExactly("/dev/vfio/vfio", "/dev/vfio/41");
        assertThat(r.getDevicesList()).allSatisfy(spec -> {
            assertThat(spec.getContainerPath()).isEqualTo(spec.getHostPath());
            assertThat(spec.getPermissions()).isEqualTo("mrw");
        });
        assertThat(r.getMountsList()).isEmpty();
        assertThat(r.getAnnotationsMap()).isEmpty();
    }

    @Test
    void severalDevicesAreCommaJoinedInRequestOrderWithoutDuplicateSpecs() {
        ContainerAllocateResponse r = only(h.kubelet.allocate(H200.fullName(),
                List.of("0000:42:00.0", "0000:41:00.0")));

        assertThat(r.getEnvsMap()).containsEntry("PCI_RESOURCE_NVIDIA_COM_GH100_H200_SXM_141GB",
                "0000:42:00.0,0000:41:00.0");
        assertThat(paths(r)).containsExactly("/dev/vfio/vfio", "/dev/vfio/42", "/dev/vfio/41");
    }

    @Test
    void vfUsesThePciPrefixAndItsOwnGroup() {
        ContainerAllocateResponse r = only(h.kubelet.allocate(L40S_1Q.fullName(), List.of("0000:1b:00.4")));

        assertThat(r.getEnvsMap()).isEqualTo(Map.of("PCI_RESOURCE_NVIDIA_COM_NVIDIA_L40S-1Q", "0000:1b:00.4"));
        assertThat(paths(r)).containsExactly("/dev/vfio/vfio", "/dev/vfio/100");
    }

    @Test
    void vfWhoseVgpuWasDestroyedSinceDiscoveryIsRefusedNamingIt() {
        h.host.unconfigureVf("0000:1b:00.5");

        assertThatThrownBy(() -> h.kubelet.allocate(L40S_2Q.fullName(), List.of("0000:1b:00.5")))
                .satisfies(status(Status.Code.INVALID_ARGUMENT, "0000:1b:00.5"));
        assertThat(only(h.kubelet.allocate(L40S_1Q.fullName(), List.of("0000:1b:00.4"))).getEnvsMap())
                .isEqualTo(Map.of("PCI_RESOURCE_NVIDIA_COM_NVIDIA_L40S-1Q", "0000:1b:00.4"));
    }

    @Test
    void mdevUsesTheMdevPrefixWithItsUuidAndOnlyItsGroupNode() {
        ContainerAllocateResponse r = only(h.kubelet.allocate(T4_1Q.fullName(), List.of(UUID)));

        assertThat(r.getEnvsMap()).isEqualTo(Map.of("MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_T4-1Q", UUID));
        assertThat(paths(r)).containsExactly("/dev/vfio/vfio", "/dev/vfio/7");
    }

    @Test
    void iommufdAddsDevIommuAndTheCdevOfEveryFunctionInTheGroup() {
        h.host.iommufd();

        ContainerAllocateResponse r = only(h.kubelet.allocate(H200.fullName(), List.of("0000:41:00.0")));

        assertThat(paths(r)).containsExactly("/dev/vfio/vfio", "/dev/iommu", "/dev/vfio/41",
                "/dev/vfio/devices/vfio3", "/dev/vfio/devices/vfio4");
        assertThat(only(h.kubelet.allocate(L40S_1Q.fullName(), List.of("0000:1b:00.4"))).getDevicesList())
                .extracting(DeviceSpec::getHostPath).contains("/dev/vfio/devices/vfio10");
    }

    @Test
    void iommufdWithoutTheRequestedDevicesCdevFallsBackToTheLegacyNodesForThatRequestOnly() {
        h.host.iommufd();
        h.host.devicePath("0000:42:00.0").ifPresent(dir -> h.host.delete(h.host.root().relativize(
                dir.resolve("vfio-dev")).toString()));

        for (int i = 0; i < 2; i++) {
            assertThat(paths(only(h.kubelet.allocate(H200.fullName(), List.of("0000:42:00.0")))))
                    .containsExactly("/dev/vfio/vfio", "/dev/vfio/42");
        }
        assertThat(paths(only(h.kubelet.allocate(H200.fullName(), List.of("0000:41:00.0", "0000:42:00.0")))))
                .containsExactly("/dev/vfio/vfio", "/dev/vfio/41", "/dev/vfio/42");
        assertThat(paths(only(h.kubelet.allocate(H200.fullName(), List.of("0000:41:00.0")))))
                .containsExactly("/dev/vfio/vfio", "/dev/iommu", "/dev/vfio/41", "/dev/vfio/devices/vfio3",
                        "/dev/vfio/devices/vfio4");
    }

    @Test
    void onAHostileVfioDevDirectoryAllocateHandsOutTheCdevDiscoveryRecorded() throws Exception {
        h.host.iommufd();
        // Next to the kernel's vfio5, a directory whose name no kernel makes: before, Allocate handed out
        // "/dev/vfio/devices/vfio 1" while discovery recorded vfio5.
        Files.createDirectories(h.host.devicePath("0000:42:00.0").orElseThrow().resolve("vfio-dev/vfio 1"));

        Device discovered = new PassthroughSource().discover(Host.of(h.host.root())).devices().stream()
                .filter(d -> d.id().equals("0000:42:00.0")).findFirst().orElseThrow();

        assertThat(discovered.vfioCdev()).contains("vfio5");
        assertThat(paths(only(h.kubelet.allocate(H200.fullName(), List.of("0000:42:00.0")))))
                .containsExactly("/dev/vfio/vfio", "/dev/iommu", "/dev/vfio/42", "/dev/vfio/devices/vfio5");
    }

    @Test
    void aVfReconfiguredToAnotherProfileIsRefusedSayingWhatItWasAndIs() {
        h.host.configureVf("0000:1b:00.4", 1150);

        assertThatThrownBy(() -> h.kubelet.allocate(L40S_1Q.fullName(), List.of("0000:1b:00.4")))
                .satisfies(status(Status.Code.INVALID_ARGUMENT,
                        "device 0000:1b:00.4 was vGPU type 1147 when advertised and is now vGPU type 1150"));
        h.host.configureVf("0000:1b:00.4", 1147);
        assertThat(only(h.kubelet.allocate(L40S_1Q.fullName(), List.of("0000:1b:00.4"))).getEnvsMap())
                .containsKey("PCI_RESOURCE_NVIDIA_COM_NVIDIA_L40S-1Q");
    }

    @Test
    void anMdevRecreatedWithAnotherTypeIsRefused() {
        h.host.removeMdev(UUID).mdev(UUID, "0000:06:00.0", "nvidia-223", "GRID T4-2Q", 7);

        assertThatThrownBy(() -> h.kubelet.allocate(T4_1Q.fullName(), List.of(UUID)))
                .satisfies(status(Status.Code.INVALID_ARGUMENT, "was mdev type nvidia-222 when advertised and is"
                        + " now mdev type nvidia-223"));
    }

    @Test
    void aCustomSourcesNonNvidiaFunctionCanBeAllocated() {
        h.host.function("0000:65:00.0", 0x8086, 0x0b25).driver("vfio-pci").iommuGroup(65).create();
        Device lab = Device.builder("0000:65:00.0", new ResourceName("LAB_ACCEL"), "lab", Attachment.VFIO_PCI)
                .iommuGroup("65").build();
        h.apply(Snapshot.builder().add("lab", new Discovery(List.of(lab), List.of())).build());
        h.await(k -> k.resources().containsKey("nvidia.com/LAB_ACCEL"));

        assertThat(paths(only(h.kubelet.allocate("nvidia.com/LAB_ACCEL", List.of("0000:65:00.0")))))
                .containsExactly("/dev/vfio/vfio", "/dev/vfio/65");
    }

    @Test
    void egmNodeOnlyWhenEveryGpuOfTheRegionIsRequested() {
        h.host.egm(4, "0000:41:00.0", "0000:42:00.0").egm(5, "0000:42:00.0").writeFile("sys/class/egm/egm6/gpu_devices",
                "0000:41:00.0\n");

        assertThat(paths(only(h.kubelet.allocate(H200.fullName(), List.of("0000:41:00.0")))))
                .doesNotContain("/dev/egm4").doesNotContain("/dev/egm6");
        assertThat(paths(only(h.kubelet.allocate(H200.fullName(), List.of("0000:41:00.0", "0000:42:00.0")))))
                .endsWith("/dev/egm4", "/dev/egm5");
    }

    @Test
    void oneResponsePerContainerRequestEachWithOnlyItsOwnDevices() {
        AllocateResponse r = h.kubelet.allocate(H200.fullName(), AllocateRequest.newBuilder()
                .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds("0000:41:00.0"))
                .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds("0000:42:00.0")).build());

        assertThat(r.getContainerResponsesList()).extracting(c -> c.getEnvsMap()
                .get("PCI_RESOURCE_NVIDIA_COM_GH100_H200_SXM_141GB")).containsExactly("0000:41:00.0", "0000:42:00.0");
        assertThat(paths(r.getContainerResponses(1))).containsExactly("/dev/vfio/vfio", "/dev/vfio/42");
    }

    @Test
    void unknownDeviceIsInvalidArgumentNamingIt() {
        assertThatThrownBy(() -> h.kubelet.allocate(H200.fullName(), List.of("0000:41:00.0", "0000:99:00.0")))
                .satisfies(status(Status.Code.INVALID_ARGUMENT, "0000:99:00.0"));
    }

    @Test
    void deviceOfAnotherResourceIsInvalidArgument() {
        assertThatThrownBy(() -> h.kubelet.allocate(L40S_1Q.fullName(), List.of("0000:1b:00.5")))
                .satisfies(status(Status.Code.INVALID_ARGUMENT, "0000:1b:00.5"));
    }

    @Test
    void deviceMovedToAnotherGroupIsRefusedAndNothingChanges() {
        var before = h.kubelet.resources();
        int updates = h.kubelet.listUpdates(H200.fullName());
        h.host.devicePath("0000:42:00.0").ifPresent(dir -> h.host.symlink(h.host.root().relativize(
                dir.resolve("iommu_group")).toString(), "../../../kernel/iommu_groups/77"));

        assertThatThrownBy(() -> h.kubelet.allocate(H200.fullName(), List.of("0000:42:00.0")))
                .satisfies(status(Status.Code.INVALID_ARGUMENT, "0000:42:00.0"));
        assertThat(h.kubelet.allocate(H200.fullName(), List.of("0000:41:00.0")).getContainerResponsesCount())
                .isEqualTo(1);
        assertThat(h.kubelet.resources()).isEqualTo(before);
        assertThat(h.kubelet.listUpdates(H200.fullName())).isEqualTo(updates);
    }

    @Test
    void groupSiblingWithAnotherVendorIsRefusedNamingTheSibling() {
        h.host.writeAttribute("0000:41:00.0", "vendor", "0x1234\n");

        assertThatThrownBy(() -> h.kubelet.allocate(H200.fullName(), List.of("0000:41:00.0")))
                .satisfies(status(Status.Code.INVALID_ARGUMENT, "0000:41:00.0"));
    }

    @Test
    void removedMdevIsRefused() {
        h.host.removeMdev(UUID);

        assertThatThrownBy(() -> h.kubelet.allocate(T4_1Q.fullName(), List.of(UUID)))
                .satisfies(status(Status.Code.INVALID_ARGUMENT, UUID));
    }

    @Test
    void afterAnUpdateAllocateSeesTheNewSnapshotAtOnce() {
        h.apply(snapshot(identified(passthrough("0000:41:00.0", 41, 0), "pci:10de:2335"),
                vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0", 100, 0),
                vf(L40S_2Q, "0000:1b:00.5", "0000:1b:00.0", 101, 0),
                mdev(UUID, "0000:06:00.0", 7, 1)));

        assertThatThrownBy(() -> h.kubelet.allocate(H200.fullName(), List.of("0000:42:00.0")))
                .satisfies(status(Status.Code.INVALID_ARGUMENT, "0000:42:00.0"));
    }

    private static ContainerAllocateResponse only(AllocateResponse response) {
        assertThat(response.getContainerResponsesCount()).isEqualTo(1);
        return response.getContainerResponses(0);
    }

    private static List<String> paths(ContainerAllocateResponse response) {
        return response.getDevicesList().stream().map(DeviceSpec::getHostPath).toList();
    }

    private static Consumer<Throwable> status(Status.Code code, String named) {
        return e -> {
            assertThat(e).isInstanceOf(StatusRuntimeException.class);
            Status s = ((StatusRuntimeException) e).getStatus();
            assertThat(s.getCode()).isEqualTo(code);
            assertThat(s.getDescription()).contains(named);
        };
    }
}
