package dev.vgpu.dra;

import java.util.Objects;

/**
 * Where Prepare reads a claim's allocation: the API server in a cluster (a reader that GETs
 * {@code resource.k8s.io/v1} ResourceClaims; not part of this module yet), or anything a test or an embedding
 * program holds. Called from the plugin's one claims thread, one claim at a time; it may block (the kubelet gives a
 * call 45 s).
 * <pre>{@code
 * ClaimReader reader = ref -> claims.containsKey(ref.uid())
 *         ? new ClaimReader.Allocated(claims.get(ref.uid()))
 *         : new ClaimReader.Unavailable("claim " + ref + " is not allocated");
 * }</pre>
 */
@FunctionalInterface
public interface ClaimReader {

    /**
     * The claim's allocation, or why there is none. An exception counts as {@link Unavailable} with its message.
     */
    Answer read(ClaimRef claim);

    /** What a read found. */
    sealed interface Answer permits Allocated, Unavailable {
    }

    /**
     * The claim is allocated.
     *
     * @param claim the claim as read; its UID must be the one asked for
     */
    record Allocated(AllocatedClaim claim) implements Answer {
        /** Checks that there is a claim. */
        public Allocated {
            Objects.requireNonNull(claim, "claim");
        }
    }

    /**
     * The claim cannot be prepared now (not found, not allocated, the API server unreachable); the kubelet retries.
     *
     * @param reason one sentence for the kubelet's event
     */
    record Unavailable(String reason) implements Answer {
        /** Checks that there is a reason. */
        public Unavailable {
            Objects.requireNonNull(reason, "reason");
        }
    }
}
