package dev.vgpu.dra;

import static dev.vgpu.dra.DraHarness.MDEV;
import static dev.vgpu.dra.DraHarness.UUID;
import static dev.vgpu.dra.DraHarness.VF;
import static dev.vgpu.dra.DraHarness.VF2;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.attach.Handover;
import dev.vgpu.attach.Handovers;
import dev.vgpu.core.ResourceName;
import dev.vgpu.dra.KubeVirtEnvReader.HostDevice;
import dev.vgpu.dra.KubeVirtEnvReader.VmiDevice;
import dev.vgpu.dra.grpc.v1.Claim;
import dev.vgpu.dra.grpc.v1.Device;
import dev.vgpu.dra.grpc.v1.NodePrepareResourceResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The extended-resource bridge (docs/DRA.md, "The extended-resource bridge"): a claim made the way the scheduler
 * makes one for a pod's plain {@code nvidia.com/<NAME>} request (annotation
 * {@code resource.kubernetes.io/extended-resource-claim: "true"}, requests {@code container-<i>-request-<j>}) goes
 * through Prepare to a CDI spec whose environment KubeVirt's own env-to-hostdev rules ({@link KubeVirtEnvReader})
 * read as the right devices, an unchanged VMI's {@code hostDevices[]}/{@code gpus[]} with {@code deviceName}. The
 * environment is exactly what the device plugin's Allocate sets for the same devices (one builder for both).
 */
class ExtendedResourceBridgeTest {

    static final String L40S = "nvidia.com/NVIDIA_L40S-1Q";
    static final String T4 = "nvidia.com/GRID_T4-1Q";

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

    /** Puts an extended-resource claim as the scheduler makes it into the API server. */
    private Claim extendedClaim(String uid, boolean annotated, AllocatedDevice... results) {
        h.apiServer.put(uid, new AllocatedClaim(new ClaimRef("vms", "virt-launcher-vm1-abcde-extended-resources-x2k9p",
                uid), Optional.empty(), List.of(results), annotated));
        return TestKubelet.claim("vms", "virt-launcher-vm1-abcde-extended-resources-x2k9p", uid);
    }

    private static AllocatedDevice result(String request, String device) {
        return new AllocatedDevice(request, DraHarness.DRIVER, DraHarness.POOL, device);
    }

    /** What the container of these requests gets: the kubelet passes it the CDI ids of its requests' devices. */
    private CdiRuntime.Edits container(NodePrepareResourceResponse answer, String... requests) throws Exception {
        assertThat(answer.getError()).isEmpty();
        List<String> mine = List.of(requests);
        List<String> ids = answer.getDevicesList().stream()
                .filter(d -> d.getRequestNamesList().stream().anyMatch(mine::contains))
                .flatMap(d -> d.getCdiDeviceIdsList().stream()).toList();
        return h.run(ids, tmp.resolve("container-" + String.join("-", requests)));
    }

    @Test
    void anUnchangedVmiFindsItsTwoVgpusAndItsMdevThroughTheEnvironmentAllocateWouldSet() throws Exception {
        Claim claim = extendedClaim("77777777-aaaa-4bbb-8ccc-000000000007", true,
                result("container-0-request-0", VF), result("container-0-request-0", VF2),
                result("container-0-request-1", MDEV));

        NodePrepareResourceResponse answer = h.prepare(claim);
        CdiRuntime.Edits edits = container(answer, "container-0-request-0", "container-0-request-1");

        assertThat(edits.env()).containsExactly(
                Map.entry("PCI_RESOURCE_NVIDIA_COM_NVIDIA_L40S-1Q", "0000:1b:00.4,0000:1b:00.5"),
                Map.entry("MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_T4-1Q", UUID));
        List<VmiDevice> vmi = List.of(new VmiDevice("vgpu1", L40S), new VmiDevice("vgpu2", L40S),
                new VmiDevice("t4", T4));
        assertThat(KubeVirtEnvReader.hostDevices(vmi, edits.env())).containsExactly(
                new HostDevice("hostdevice-vgpu1", "pci", "0000:1b:00.4"),
                new HostDevice("hostdevice-vgpu2", "pci", "0000:1b:00.5"),
                new HostDevice("hostdevice-t4", "mdev", UUID));
        // Exactly what Allocate sets for the same devices: one builder, never a copy.
        assertThat(allocateEnv(L40S, "0000:1b:00.4", "0000:1b:00.5")).isEqualTo(Map.of(
                "PCI_RESOURCE_NVIDIA_COM_NVIDIA_L40S-1Q", "0000:1b:00.4,0000:1b:00.5"));
        assertThat(allocateEnv(T4, UUID)).isEqualTo(Map.of("MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_T4-1Q", UUID));
    }

    @Test
    void eachContainerGetsTheVariablesOfItsOwnRequestsOnly() throws Exception {
        Claim claim = extendedClaim("88888888-aaaa-4bbb-8ccc-000000000008", true,
                result("container-0-request-0", VF), result("container-1-request-0", VF2));

        NodePrepareResourceResponse answer = h.prepare(claim);

        assertThat(container(answer, "container-0-request-0").env())
                .containsExactly(Map.entry("PCI_RESOURCE_NVIDIA_COM_NVIDIA_L40S-1Q", "0000:1b:00.4"));
        assertThat(container(answer, "container-1-request-0").env())
                .containsExactly(Map.entry("PCI_RESOURCE_NVIDIA_COM_NVIDIA_L40S-1Q", "0000:1b:00.5"));
        assertThat(answer.getDevicesList()).extracting(d -> List.copyOf(d.getRequestNamesList()))
                .containsExactly(List.of("container-0-request-0"), List.of("container-1-request-0"));
    }

    @Test
    void anOrdinaryClaimGetsNoEnvironmentSoAVmiOfDeviceNamesFindsNothing() throws Exception {
        Claim claim = extendedClaim("99999999-aaaa-4bbb-8ccc-000000000009", false,
                result("container-0-request-0", VF));

        CdiRuntime.Edits edits = container(h.prepare(claim), "container-0-request-0");

        assertThat(edits.env()).isEmpty();
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> KubeVirtEnvReader.hostDevices(
                List.of(new VmiDevice("vgpu1", L40S)), edits.env())))
                .isInstanceOf(KubeVirtEnvReader.Rejected.class);
    }

    @Test
    void aResourceTheEmbedderDoesNotBridgeGetsNoEnvironmentWhileTheOthersDo() throws Exception {
        h.stop();
        h.start(b -> b.bridged(r -> !r.fullName().equals(L40S)));
        Claim claim = extendedClaim("aaaaaaaa-aaaa-4bbb-8ccc-00000000000a", true,
                result("container-0-request-0", VF), result("container-0-request-1", MDEV));

        CdiRuntime.Edits edits = container(h.prepare(claim), "container-0-request-0", "container-0-request-1");

        assertThat(edits.env()).containsExactly(Map.entry("MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_T4-1Q", UUID));
    }

    @Test
    void theFixtureKeepsKubeVirtsRules() throws Exception {
        // A trailing comma is dropped, an address popped for one resource is gone from the others, an unset
        // variable gives nothing, and too few devices fail the VM.
        Map<String, String> env = Map.of("PCI_RESOURCE_NVIDIA_COM_A", "0000:01:00.0,0000:02:00.0,",
                "PCI_RESOURCE_NVIDIA_COM_B", "0000:01:00.0");
        assertThat(KubeVirtEnvReader.hostDevices(List.of(new VmiDevice("a", "nvidia.com/A"),
                new VmiDevice("a2", "nvidia.com/A")), env)).extracting(HostDevice::address)
                .containsExactly("0000:01:00.0", "0000:02:00.0");
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> KubeVirtEnvReader.hostDevices(List.of(
                new VmiDevice("a", "nvidia.com/A"), new VmiDevice("b", "nvidia.com/B")), env)))
                .isInstanceOf(KubeVirtEnvReader.Rejected.class).hasMessageContaining("does not match");
        assertThat(KubeVirtEnvReader.variable("MDEV_PCI_RESOURCE", "nvidia.com/GRID_T4-1Q"))
                .isEqualTo("MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_T4-1Q");
    }

    /** What the device plugin's Allocate answers as env for these ids of {@code resource} on the same host. */
    private Map<String, String> allocateEnv(String resource, String... ids) {
        Handover answer = Handovers.forHost(h.host.host(), h.sources).check(h.snapshot,
                new ResourceName(resource.substring("nvidia.com/".length())), List.of(ids));
        assertThat(answer).isInstanceOf(Handover.Granted.class);
        return ((Handover.Granted) answer).env();
    }
}
