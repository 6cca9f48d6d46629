package dev.vgpu.dra;

import java.time.Duration;
import java.util.Objects;

/**
 * Where Prepare reads a claim's allocation: the API server in a cluster ({@code vgpu-dra-apiserver}'s
 * {@code ApiClaimReader}, which GETs {@code resource.k8s.io/v1} ResourceClaims), or anything a test or an embedding
 * program holds. The plugin reads every claim of a call before Prepare sees it, as the Go helper does, on its one
 * read thread ({@code vgpu-dra-reads}), one claim at a time, never on the thread that owns the prepared claims: a
 * read that blocks delays only the Prepare calls behind it, never an Unprepare or a repeated Prepare.
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

    /**
     * Reads within {@code timeLeft}, what remains of the kubelet's call (its gRPC deadline; 45 s, the kubelet's, when
     * the call carried none). A reader that talks to an API server bounds each request and its retries by it and
     * answers {@link Unavailable} once it runs out: the kubelet has given up by then, and retries the claim itself.
     * The default ignores it, for readers that answer at once.
     */
    default Answer read(ClaimRef claim, Duration timeLeft) {
        return read(claim);
    }

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
