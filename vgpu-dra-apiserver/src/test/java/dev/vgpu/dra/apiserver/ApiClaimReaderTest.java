package dev.vgpu.dra.apiserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.dra.AllocatedClaim;
import dev.vgpu.dra.AllocatedDevice;
import dev.vgpu.dra.ClaimReader;
import dev.vgpu.dra.ClaimRef;
import dev.vgpu.dra.DriverName;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimSpec;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@link ApiClaimReader} against fabric8's mock API server in CRUD mode. */
@EnableKubernetesMockClient(crud = true)
class ApiClaimReaderTest {

    KubernetesClient client;

    /** Creates a claim (its status written as the scheduler would) and returns the UID the server gave it. */
    static String claim(KubernetesClient client, String namespace, String name, Map<String, String> annotations,
                        List<DeviceRequestAllocationResult> results) {
        ResourceClaim claim = new ResourceClaim();
        claim.setMetadata(new ObjectMetaBuilder().withNamespace(namespace).withName(name)
                .withAnnotations(annotations).build());
        claim.setSpec(new ResourceClaimSpec());
        ResourceClaim created = client.resource(claim).create();
        if (results != null) {
            AllocationResult allocation = new AllocationResult();
            allocation.setDevices(new DeviceAllocationResult(List.of(), results));
            created.setStatus(new ResourceClaimStatus(allocation, List.of(), List.of()));
            created = client.resource(created).updateStatus();
        }
        return created.getMetadata().getUid();
    }

    static DeviceRequestAllocationResult result(String request, String driver, String pool, String device) {
        DeviceRequestAllocationResult r = new DeviceRequestAllocationResult();
        r.setRequest(request);
        r.setDriver(driver);
        r.setPool(pool);
        r.setDevice(device);
        return r;
    }

    private ClaimReader.Answer read(String namespace, String name, String uid) {
        return new ApiClaimReader(ApiServer.of(client), DriverName.DEFAULT).read(new ClaimRef(namespace, name, uid));
    }

    @Test
    void anAllocatedClaimGivesThisDriversResultsInOrderAndThePodClaimName() {
        String uid = claim(client, "vms", "vm-a-gpu-x7k2p", Map.of(ApiClaimReader.POD_CLAIM_NAME, "gpu"), List.of(
                result("gpu", "gpu.vgpu.dev", "node-a", "pci-0000-1b-00-4"),
                result("nic", "net.example.com", "node-a", "eth0"),
                result("gpu/big", "gpu.vgpu.dev", "node-a", "pci-0000-41-00-0")));

        assertThat(read("vms", "vm-a-gpu-x7k2p", uid)).isEqualTo(new ClaimReader.Allocated(new AllocatedClaim(
                new ClaimRef("vms", "vm-a-gpu-x7k2p", uid), Optional.of("gpu"), List.of(
                new AllocatedDevice("gpu", "gpu.vgpu.dev", "node-a", "pci-0000-1b-00-4"),
                new AllocatedDevice("gpu/big", "gpu.vgpu.dev", "node-a", "pci-0000-41-00-0")))));
    }

    @Test
    void aClaimNamedDirectlyHasNoPodClaimName() {
        String uid = claim(client, "vms", "gpu", null, List.of(result("r", "gpu.vgpu.dev", "node-a", "mdev-x")));

        ClaimReader.Answer answer = read("vms", "gpu", uid);

        assertThat(answer).isInstanceOf(ClaimReader.Allocated.class);
        assertThat(((ClaimReader.Allocated) answer).claim().podClaimName()).isEmpty();
    }

    /**
     * A claim the scheduler made for a pod's plain {@code nvidia.com/<NAME>} request carries
     * {@code resource.kubernetes.io/extended-resource-claim: "true"}; an admin-access result says so.
     */
    @Test
    void theExtendedResourceAnnotationAndAdminAccessAreRead() {
        DeviceRequestAllocationResult admin = result("container-0-request-0", "gpu.vgpu.dev", "node-a", "pci-x");
        admin.setAdminAccess(true);
        String uid = claim(client, "vms", "pod-extended-resources-x2k9p",
                Map.of(AllocatedClaim.EXTENDED_RESOURCE_ANNOTATION, "true"), List.of(admin,
                        result("container-0-request-1", "gpu.vgpu.dev", "node-a", "pci-y")));
        String plain = claim(client, "vms", "other", Map.of(AllocatedClaim.EXTENDED_RESOURCE_ANNOTATION, "false"),
                List.of(result("r", "gpu.vgpu.dev", "node-a", "pci-z")));

        AllocatedClaim claim = ((ClaimReader.Allocated) read("vms", "pod-extended-resources-x2k9p", uid)).claim();

        assertThat(claim.extendedResource()).isTrue();
        assertThat(claim.results()).extracting(AllocatedDevice::adminAccess).containsExactly(true, false);
        assertThat(((ClaimReader.Allocated) read("vms", "other", plain)).claim().extendedResource()).isFalse();
    }

    @Test
    void anotherUidIsAnotherClaim() {
        claim(client, "vms", "gpu", null, List.of(result("r", "gpu.vgpu.dev", "node-a", "mdev-x")));

        assertThat(read("vms", "gpu", "0d1c4a52-old")).isInstanceOfSatisfying(ClaimReader.Unavailable.class,
                u -> assertThat(u.reason()).startsWith("claim vms/gpu has UID ").endsWith(
                        ", not 0d1c4a52-old (deleted and created again?)"));
    }

    @Test
    void anUnallocatedOrMissingClaimIsUnavailableInWords() {
        String uid = claim(client, "vms", "pending", null, null);

        assertThat(read("vms", "pending", uid))
                .isEqualTo(new ClaimReader.Unavailable("claim vms/pending is not allocated"));
        assertThat(read("vms", "gone", "u1")).isEqualTo(new ClaimReader.Unavailable("claim vms/gone does not exist"));
    }

    @Test
    void anApiServerThatCannotBeReachedIsUnavailableWithoutClassNames() throws Exception {
        String kubeconfig = """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """;
        java.nio.file.Path file = java.nio.file.Files.createTempFile("kubeconfig", ".yaml");
        java.nio.file.Files.writeString(file, kubeconfig);
        try (ApiServer unreachable = ApiServer.connect(Optional.of(file), Thread::new)) {
            ClaimReader.Answer answer = new ApiClaimReader(unreachable, DriverName.DEFAULT)
                    .read(new ClaimRef("vms", "gpu", "u1"));

            assertThat(answer).isInstanceOfSatisfying(ClaimReader.Unavailable.class, u -> assertThat(u.reason())
                    .startsWith("cannot read claim vms/gpu from the API server: ").doesNotContain("Exception"));
        } finally {
            java.nio.file.Files.delete(file);
        }
    }
}
