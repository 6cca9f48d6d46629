package dev.vgpu.dra;

import static dev.vgpu.dra.DraHarness.GPU;
import static dev.vgpu.dra.DraHarness.MDEV;
import static dev.vgpu.dra.DraHarness.UUID;
import static dev.vgpu.dra.DraHarness.VF;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.dra.KubeVirtMetadataReader.VmiClaim;
import dev.vgpu.dra.grpc.v1.Claim;
import dev.vgpu.dra.grpc.v1.Device;
import dev.vgpu.dra.grpc.v1.NodePrepareResourceResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A VF vGPU, a passthrough GPU and an mdev, each from an allocated claim through Prepare, a CDI runtime and
 * KubeVirt's metadata reader (docs/DRA.md §5): the launcher finds the right device, and the container gets the
 * VFIO nodes KubeVirt needs for it.
 */
class KubeVirtReadsWhatPrepareWroteTest {

    @TempDir
    Path tmp;
    DraHarness h;

    @BeforeEach
    void start() {
        h = new DraHarness(tmp);
    }

    @AfterEach
    void stop() {
        h.close();
    }

    private CdiRuntime.Edits container(NodePrepareResourceResponse answer) throws Exception {
        assertThat(answer.getError()).isEmpty();
        List<String> ids = answer.getDevicesList().stream().flatMap(d -> d.getCdiDeviceIdsList().stream()).toList();
        return h.run(ids, tmp.resolve("container"));
    }

    @Test
    void aVfVgpuIsFoundByItsPciBusIdWithItsOwnGroupNode() throws Exception {
        Claim claim = h.allocate("vf-claim", "11111111-aaaa-4bbb-8ccc-000000000001", "gpu", VF);

        NodePrepareResourceResponse answer = h.prepare(claim);

        assertThat(answer.getDevicesList()).containsExactly(Device.newBuilder().addRequestNames("gpu")
                .setPoolName("node-a").setDeviceName(VF)
                .addCdiDeviceIds("gpu.vgpu.dev/claim=11111111-aaaa-4bbb-8ccc-000000000001-" + VF)
                .addCdiDeviceIds("gpu.vgpu.dev/metadata=11111111-aaaa-4bbb-8ccc-000000000001_gpu").build());
        CdiRuntime.Edits edits = container(answer);
        assertThat(edits.nodes()).containsExactly(new CdiRuntime.Node("/dev/vfio/vfio", "/dev/vfio/vfio", "mrw"),
                new CdiRuntime.Node("/dev/vfio/100", "/dev/vfio/100", "mrw"));
        assertThat(edits.mounts()).singleElement().satisfies(m -> {
            assertThat(m.options()).containsExactly("ro", "bind");
            assertThat(m.containerPath()).isEqualTo("/var/run/kubernetes.io/dra-device-attributes/resourceclaims/"
                    + "vf-claim/gpu/gpu.vgpu.dev-metadata.json");
            assertThat(Path.of(m.hostPath())).isEqualTo(tmp.resolve("kubelet/plugins/gpu.vgpu.dev/"
                    + "dra-device-metadata/vms_11111111-aaaa-4bbb-8ccc-000000000001/gpu/metadata.json").toAbsolutePath());
        });
        assertThat(KubeVirtMetadataReader.read(tmp.resolve("container"), List.of(VmiClaim.named("vgpu", "vf-claim")),
                "vgpu", "gpu")).isEqualTo(new KubeVirtMetadataReader.Pci("0000:1b:00.4"));
    }

    @Test
    void aPassthroughGpuIsFoundByItsPciBusIdWithItsWholeGroupsNode() throws Exception {
        Claim claim = h.allocate("h200", "22222222-aaaa-4bbb-8ccc-000000000002", "gpu", GPU);

        CdiRuntime.Edits edits = container(h.prepare(claim));

        assertThat(edits.nodes()).extracting(CdiRuntime.Node::path).containsExactly("/dev/vfio/vfio", "/dev/vfio/41");
        assertThat(KubeVirtMetadataReader.read(tmp.resolve("container"), List.of(VmiClaim.named("gpu0", "h200")),
                "gpu0", "gpu")).isEqualTo(new KubeVirtMetadataReader.Pci("0000:41:00.0"));
    }

    /**
     * With iommufd on the host (a GH200 whose KubeVirt attaches through it), the container gets {@code /dev/iommu}
     * and the group's VFIO cdevs besides the legacy nodes: exactly the nodes Allocate hands out for the same device
     * (before: the legacy nodes only, so such a VM could not start from a DRA claim).
     */
    @Test
    void withIommufdTheContainerGetsTheNodesAllocateHandsOut() throws Exception {
        h.host.iommufd().mkdirs("sys/bus/pci/devices/0000:41:00.0/vfio-dev/vfio3")
                .mkdirs("sys/bus/pci/devices/0000:41:00.1/vfio-dev/vfio4");
        Claim claim = h.allocate("gh200", "12121212-aaaa-4bbb-8ccc-000000000012", "gpu", GPU);

        CdiRuntime.Edits edits = container(h.prepare(claim));

        assertThat(edits.nodes()).extracting(CdiRuntime.Node::path).containsExactly("/dev/vfio/vfio", "/dev/iommu",
                "/dev/vfio/41", "/dev/vfio/devices/vfio3", "/dev/vfio/devices/vfio4");
        dev.vgpu.attach.Handover allocate = dev.vgpu.attach.Handovers.forHost(h.host.host(), h.sources).check(
                h.snapshot, h.snapshot.device("0000:41:00.0").orElseThrow().resource(), List.of("0000:41:00.0"));
        assertThat(edits.nodes()).extracting(CdiRuntime.Node::path).containsExactlyElementsOf(
                ((dev.vgpu.attach.Handover.Granted) allocate).nodes().stream().map(dev.vgpu.attach.DeviceNode::path)
                        .toList());
    }

    @Test
    void anEgmNodeOfTheWholeHandoverIsInTheSpecLevelEditsAndReachesTheContainer() throws Exception {
        h.host.egm(4, "0000:41:00.0");
        Claim claim = h.allocate("h200", "66666666-aaaa-4bbb-8ccc-000000000006", "gpu", GPU);

        CdiRuntime.Edits edits = container(h.prepare(claim));

        assertThat(edits.nodes()).extracting(CdiRuntime.Node::path)
                .containsExactly("/dev/vfio/vfio", "/dev/vfio/41", "/dev/egm4");
        assertThat(java.nio.file.Files.readString(h.cdiDir().resolve(
                "gpu.vgpu.dev-claim_66666666-aaaa-4bbb-8ccc-000000000006.json")))
                .endsWith("]}}],\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/egm4\",\"hostPath\":"
                        + "\"/dev/egm4\",\"permissions\":\"mrw\"}]}}\n");
    }

    @Test
    void anMdevFromATemplateIsFoundByItsUuidUnderThePodClaimName() throws Exception {
        Claim claim = h.allocate("virt-launcher-vm1-x7k2p-vgpu-9zt4q", "33333333-aaaa-4bbb-8ccc-000000000003",
                Optional.of("vgpu"), "t4", MDEV);

        CdiRuntime.Edits edits = container(h.prepare(claim));

        assertThat(edits.nodes()).extracting(CdiRuntime.Node::path).containsExactly("/dev/vfio/vfio", "/dev/vfio/7");
        assertThat(edits.mounts()).singleElement().extracting(CdiRuntime.Mount::containerPath)
                .isEqualTo("/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/vgpu/t4/"
                        + "gpu.vgpu.dev-metadata.json");
        assertThat(KubeVirtMetadataReader.read(tmp.resolve("container"),
                List.of(VmiClaim.fromTemplate("vgpu", "t4-1q-template")), "vgpu", "t4"))
                .isEqualTo(new KubeVirtMetadataReader.Mdev(UUID));
    }

    @Test
    void twoRequestsOfOneClaimEachGetTheirMetadataOnTheirFirstDeviceAndKubeVirtTellsThemApart() throws Exception {
        h.apiServer.put("44444444-aaaa-4bbb-8ccc-000000000004", new AllocatedClaim(
                new ClaimRef("vms", "mixed", "44444444-aaaa-4bbb-8ccc-000000000004"), Optional.empty(),
                List.of(new AllocatedDevice("vgpu", "gpu.vgpu.dev", "node-a", VF),
                        new AllocatedDevice("whole", "gpu.vgpu.dev", "node-a", GPU))));
        Claim claim = TestKubelet.claim("vms", "mixed", "44444444-aaaa-4bbb-8ccc-000000000004");

        NodePrepareResourceResponse answer = h.prepare(claim);
        container(answer);

        assertThat(answer.getDevicesList()).extracting(d -> d.getRequestNames(0), Device::getCdiDeviceIdsCount)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("vgpu", 2),
                        org.assertj.core.groups.Tuple.tuple("whole", 2));
        List<VmiClaim> vmi = List.of(VmiClaim.named("both", "mixed"));
        assertThat(KubeVirtMetadataReader.read(tmp.resolve("container"), vmi, "both", "vgpu"))
                .isEqualTo(new KubeVirtMetadataReader.Pci("0000:1b:00.4"));
        assertThat(KubeVirtMetadataReader.read(tmp.resolve("container"), vmi, "both", "whole"))
                .isEqualTo(new KubeVirtMetadataReader.Pci("0000:41:00.0"));
    }

    @Test
    void aSubrequestIsAnsweredUnderItsBaseRequestButKubeVirtFindsNoRequestOfThatExactName() throws Exception {
        Claim claim = h.allocate("sub", "55555555-aaaa-4bbb-8ccc-000000000005", "gpu/small", VF);

        NodePrepareResourceResponse answer = h.prepare(claim);
        container(answer);

        assertThat(answer.getDevices(0).getRequestNamesList()).containsExactly("gpu");
        // docs/DRA.md §5: KubeVirt matches requests[].name exactly, and the metadata keeps "gpu/small".
        assertThatThrownBy(() -> KubeVirtMetadataReader.read(tmp.resolve("container"),
                List.of(VmiClaim.named("g", "sub")), "g", "gpu"))
                .isInstanceOf(KubeVirtMetadataReader.Rejected.class).hasMessageContaining("no request named gpu");
    }
}
