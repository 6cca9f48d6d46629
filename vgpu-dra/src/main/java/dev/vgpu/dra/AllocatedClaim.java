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
 */
public record AllocatedClaim(ClaimRef claim, Optional<String> podClaimName, List<AllocatedDevice> results) {

    /** Copies the list. */
    public AllocatedClaim {
        Objects.requireNonNull(claim, "claim");
        Objects.requireNonNull(podClaimName, "podClaimName");
        results = List.copyOf(results);
    }
}
