package dev.vgpu.attach;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.hostfiles.ScanScope;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Handovers without gRPC, as a DRA plugin asks them: per-device nodes, legacy-only nodes, EGM for the whole
 * handover, env per resource, and refusals from the sources' re-checks.
 */
class HandoversTest {

    private static final ResourceName H200 = new ResourceName("GH100_H200_SXM_141GB");
    private static final ResourceName T4_1Q = new ResourceName("GRID_T4-1Q");
    private static final String UUID = "aa618089-8b16-4d01-a136-25a0f3c73123";

    @TempDir
    Path tmp;
    SysfsTree host;
    /** What the stub source answers to every re-check. */
    final AtomicReference<DeviceCheck> answer = new AtomicReference<>(DeviceCheck.same());
    /** The scope of every re-check, in call order. */
    final List<ScanScope> scopes = new CopyOnWriteArrayList<>();
    Handovers handovers;
    Snapshot snapshot;

    @BeforeEach
    void host() {
        host = SysfsTree.at(tmp.resolve("host"));
        host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).vfioCdev("vfio3").create();
        host.function("0000:41:00.1", 0x10de, 0x22e8).driver("vfio-pci").iommuGroup(41).vfioCdev("vfio4").create();
        host.passthroughGpu("0000:42:00.0", 0x2335).iommuGroup(42).vfioCdev("vfio5").create();
        host.nvidiaGpu("0000:06:00.0", 0x1eb8).create();
        host.mdev(UUID, "0000:06:00.0", "nvidia-222", "GRID T4-1Q", 7);
        handovers = Handovers.forHost(Host.of(host.root()), List.of(new StubSource()));
        snapshot = Snapshot.builder().add("lab", new Discovery(List.of(gpu("0000:41:00.0", 41),
                gpu("0000:42:00.0", 42), Device.builder(UUID, T4_1Q, "lab", Attachment.MEDIATED)
                        .parent(PciAddress.parse("0000:06:00.0")).iommuGroup("7").build()), List.of())).build();
    }

    private static Device gpu(String bdf, int group) {
        return Device.builder(bdf, H200, "lab", Attachment.VFIO_PCI).iommuGroup(Integer.toString(group)).build();
    }

    @Test
    void legacyNodesLeaveOutIommufdAndCdevsEvenWhereTheHostHasThem() {
        host.iommufd();

        Handover.Granted legacy = granted(handovers.check(snapshot, H200, List.of("0000:41:00.0"), VfioNodes.LEGACY));
        Handover.Granted iommufd = granted(handovers.check(snapshot, H200, List.of("0000:41:00.0"),
                VfioNodes.IOMMUFD_WHEN_PRESENT));

        assertThat(paths(legacy.nodes())).containsExactly("/dev/vfio/vfio", "/dev/vfio/41");
        assertThat(legacy.nodes()).extracting(DeviceNode::kind)
                .containsExactly(DeviceNode.Kind.VFIO_CONTAINER, DeviceNode.Kind.VFIO_GROUP);
        assertThat(paths(iommufd.nodes())).containsExactly("/dev/vfio/vfio", "/dev/iommu", "/dev/vfio/41",
                "/dev/vfio/devices/vfio3", "/dev/vfio/devices/vfio4");
        assertThat(paths(iommufd.devices().get(0).nodes())).isEqualTo(paths(iommufd.nodes()));
    }

    @Test
    void eachDeviceCarriesItsOwnNodesAndAnEgmNodeBelongsToTheWholeHandover() {
        host.egm(4, "0000:41:00.0", "0000:42:00.0");

        Handover.Granted granted = granted(handovers.check(snapshot, H200, List.of("0000:42:00.0", "0000:41:00.0"),
                VfioNodes.LEGACY));

        assertThat(paths(granted.nodes())).containsExactly("/dev/vfio/vfio", "/dev/vfio/42", "/dev/vfio/41",
                "/dev/egm4");
        assertThat(granted.nodes().get(3).kind()).isEqualTo(DeviceNode.Kind.EGM);
        assertThat(granted.devices()).extracting(d -> d.device().id()).containsExactly("0000:42:00.0", "0000:41:00.0");
        assertThat(paths(granted.devices().get(0).nodes())).containsExactly("/dev/vfio/vfio", "/dev/vfio/42");
        assertThat(paths(granted.devices().get(1).nodes())).containsExactly("/dev/vfio/vfio", "/dev/vfio/41");
        assertThat(granted.devices().get(1).pciBusId()).contains(PciAddress.parse("0000:41:00.0"));
        assertThat(granted.devices().get(1).mdevUuid()).isEmpty();
        assertThat(granted.env()).isEqualTo(Map.of("PCI_RESOURCE_NVIDIA_COM_GH100_H200_SXM_141GB",
                "0000:42:00.0,0000:41:00.0"));
    }

    @Test
    void devicesOfTwoResourcesGetOneEnvEntryEachAndAnMdevItsUuid() {
        Device mdev = snapshot.device(UUID).orElseThrow();
        Device gpu = snapshot.device("0000:42:00.0").orElseThrow();

        Handover.Granted granted = granted(handovers.check(snapshot, List.of(mdev, gpu), VfioNodes.LEGACY));

        assertThat(granted.env()).containsExactly(Map.entry("MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_T4-1Q", UUID),
                Map.entry("PCI_RESOURCE_NVIDIA_COM_GH100_H200_SXM_141GB", "0000:42:00.0"));
        HandedDevice handed = granted.devices().get(0);
        assertThat(handed.mdevUuid()).contains(UUID);
        assertThat(handed.pciBusId()).isEmpty();
        assertThat(handed.iommuGroup()).isEqualTo("7");
        assertThat(paths(handed.nodes())).containsExactly("/dev/vfio/vfio", "/dev/vfio/7");
        assertThat(paths(granted.nodes())).containsExactly("/dev/vfio/vfio", "/dev/vfio/42", "/dev/vfio/7");
    }

    @Test
    void aSourceThatSaysChangedOrCannotTellRefusesNamingTheDevice() {
        answer.set(DeviceCheck.changed("vendor:device 10de:2335", "10de:2330"));
        assertThat(handovers.check(snapshot, H200, List.of("0000:42:00.0"), VfioNodes.LEGACY))
                .isEqualTo(new Handover.Refused("device 0000:42:00.0 was vendor:device 10de:2335 when advertised and"
                        + " is now 10de:2330"));

        answer.set(null);
        assertThat(handovers.check(snapshot, H200, List.of("0000:42:00.0"), VfioNodes.LEGACY))
                .isInstanceOfSatisfying(Handover.Refused.class, r -> assertThat(r.reason())
                        .contains("0000:42:00.0", "not checkable"));
        assertThat(handovers.recheck(snapshot.device("0000:42:00.0").orElseThrow()).unchanged()).isFalse();
    }

    @Test
    void unknownIdsAnotherResourcesDevicesAndEmptyRequestsAreRefused() {
        assertThat(handovers.check(snapshot, H200, List.of("0000:99:00.0"), VfioNodes.LEGACY))
                .isEqualTo(new Handover.Refused("unknown device 0000:99:00.0: not advertised by nvidia.com/"
                        + "GH100_H200_SXM_141GB"));
        assertThat(handovers.check(snapshot, T4_1Q, List.of("0000:41:00.0"), VfioNodes.LEGACY))
                .isInstanceOf(Handover.Refused.class);
        assertThat(handovers.check(snapshot, H200, List.of(), VfioNodes.LEGACY)).isInstanceOf(Handover.Refused.class);
        assertThat(handovers.check(snapshot, List.of(), VfioNodes.LEGACY)).isInstanceOf(Handover.Refused.class);
    }

    @Test
    void theReChecksOfOneHandoverShareOneScopeSoAFileIsReadOnceAndTheNextHandoverReadsAfresh() {
        handovers.check(snapshot, H200, List.of("0000:41:00.0", "0000:42:00.0"), VfioNodes.LEGACY);
        handovers.check(snapshot, H200, List.of("0000:41:00.0"), VfioNodes.LEGACY);
        handovers.recheck(snapshot.device("0000:41:00.0").orElseThrow());

        assertThat(scopes).hasSize(4);
        assertThat(scopes.get(0)).isSameAs(scopes.get(1)).isNotSameAs(ScanScope.none());
        assertThat(scopes.get(2)).isNotSameAs(scopes.get(0)).isNotSameAs(ScanScope.none());
        assertThat(scopes.get(3)).as("a health re-check reads anew").isSameAs(ScanScope.none());
    }

    @Test
    void theGroupNodeIsPresentOnlyForAGroupNameAKernelMakes() {
        assertThat(handovers.groupNodePresent("41")).isTrue();
        assertThat(handovers.groupNodePresent("77")).isFalse();
        assertThat(handovers.groupNodePresent("../41")).isFalse();
    }

    private static Handover.Granted granted(Handover answer) {
        assertThat(answer).isInstanceOf(Handover.Granted.class);
        return (Handover.Granted) answer;
    }

    private static List<String> paths(List<DeviceNode> nodes) {
        return nodes.stream().map(DeviceNode::path).toList();
    }

    /** The source of the snapshot's devices; its re-check answers {@link #answer}. */
    private final class StubSource implements DeviceSource {
        @Override
        public String name() {
            return "lab";
        }

        @Override
        public Discovery discover(Host h) {
            return Discovery.builder().build();
        }

        @Override
        public DeviceCheck recheck(Host h, Device device) {
            scopes.add(h.scanScope());
            return answer.get();
        }
    }
}
