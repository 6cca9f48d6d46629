package dev.vgpu.dra;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What the plugin needs of an allocated resource claim (docs/DRA.md §3).
 *
 * @param claim        its namespace, name and UID
 * @param podClaimName the annotation {@code resource.kubernetes.io/pod-claim-name} of a claim made from a template
 *                     (the pod-level claim name, which the metadata path uses); empty for a claim named directly
 * @param results      {@code status.allocation.devices.results}, every driver's, in order
 * @param extendedResource whether the claim carries the annotation {@value #EXTENDED_RESOURCE_ANNOTATION}
 *                     {@code "true"}: the scheduler made it for a pod's plain {@code nvidia.com/<NAME>} request
 *                     (Kubernetes {@code DRAExtendedResource}), so the container gets the device plugin's
 *                     environment as well (docs/DRA.md, "The extended-resource bridge")
 */
public record AllocatedClaim(ClaimRef claim, Optional<String> podClaimName, List<AllocatedDevice> results,
                             boolean extendedResource) {

    /** The annotation the scheduler puts on a claim it makes for extended resources. */
    public static final String EXTENDED_RESOURCE_ANNOTATION = "resource.kubernetes.io/extended-resource-claim";

    /** Copies the list. */
    public AllocatedClaim {
        Objects.requireNonNull(claim, "claim");
        Objects.requireNonNull(podClaimName, "podClaimName");
        results = List.copyOf(results);
    }

    /** A claim a user wrote (not an extended-resource claim). */
    public AllocatedClaim(ClaimRef claim, Optional<String> podClaimName, List<AllocatedDevice> results) {
        this(claim, podClaimName, results, false);
    }
}
