package dev.vgpu.dra;

import java.util.List;

/** The answer for one claim of a Prepare: its devices, or why it is not prepared. */
sealed interface ClaimOutcome permits ClaimOutcome.Prepared, ClaimOutcome.Failed {

    /** The claim is prepared; every CDI id it answers exists under the CDI directory. */
    record Prepared(List<PreparedDevice> devices) implements ClaimOutcome {
        public Prepared {
            devices = List.copyOf(devices);
        }
    }

    /** Nothing of the claim was left on disk; the kubelet retries it. */
    record Failed(String error) implements ClaimOutcome {
    }
}
