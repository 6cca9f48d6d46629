package dev.vgpu.dra;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Reads claims from the API server (docs/DRA.md §3): a GET of the {@code resource.k8s.io/v1} ResourceClaim by
 * namespace and name; the UID must be the kubelet's (a claim deleted and re-created under the same name is another
 * claim); {@code status.allocation} must be set; of {@code status.allocation.devices.results} only this driver's
 * entries are kept; the annotation {@code resource.kubernetes.io/pod-claim-name} gives a template-made claim's
 * pod-level name. Every failure is an {@link ClaimReader.Unavailable} in words, which the kubelet retries.
 * <pre>{@code
 * ClaimReader reader = new ApiClaimReader(client, DriverName.DEFAULT);
 * }</pre>
 * Thread-safe (the client is); the plugin calls it from its claims thread.
 */
public final class ApiClaimReader implements ClaimReader {

    /** The annotation a claim made from a template carries. */
    static final String POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name";

    private final KubernetesClient client;
    private final DriverName driver;

    /** A reader of {@code driver}'s results through {@code client}. */
    public ApiClaimReader(KubernetesClient client, DriverName driver) {
        this.client = Objects.requireNonNull(client, "client");
        this.driver = Objects.requireNonNull(driver, "driver");
    }

    @Override
    public Answer read(ClaimRef ref) {
        ResourceClaim claim;
        try {
            claim = client.resources(ResourceClaim.class).inNamespace(ref.namespace()).withName(ref.name()).get();
        } catch (RuntimeException e) {
            return new Unavailable("cannot read claim " + ref.namespace() + "/" + ref.name()
                    + " from the API server: " + ApiServer.describe(e));
        }
        if (claim == null || claim.getMetadata() == null) {
            return new Unavailable("claim " + ref.namespace() + "/" + ref.name() + " does not exist");
        }
        if (!ref.uid().equals(claim.getMetadata().getUid())) {
            return new Unavailable("claim " + ref.namespace() + "/" + ref.name() + " has UID "
                    + claim.getMetadata().getUid() + ", not " + ref.uid() + " (deleted and created again?)");
        }
        if (claim.getStatus() == null || claim.getStatus().getAllocation() == null) {
            return new Unavailable("claim " + ref.namespace() + "/" + ref.name() + " is not allocated");
        }
        List<AllocatedDevice> results = new ArrayList<>();
        var devices = claim.getStatus().getAllocation().getDevices();
        if (devices != null && devices.getResults() != null) {
            for (DeviceRequestAllocationResult r : devices.getResults()) {
                if (driver.value().equals(r.getDriver())) {
                    if (r.getRequest() == null || r.getPool() == null || r.getDevice() == null) {
                        return new Unavailable("claim " + ref.namespace() + "/" + ref.name()
                                + " has an allocation result without request, pool or device");
                    }
                    results.add(new AllocatedDevice(r.getRequest(), r.getDriver(), r.getPool(), r.getDevice()));
                }
            }
        }
        Map<String, String> annotations = claim.getMetadata().getAnnotations();
        Optional<String> podClaimName = annotations == null ? Optional.empty()
                : Optional.ofNullable(annotations.get(POD_CLAIM_NAME)).filter(s -> !s.isEmpty());
        return new Allocated(new AllocatedClaim(ref, podClaimName, results));
    }
}
