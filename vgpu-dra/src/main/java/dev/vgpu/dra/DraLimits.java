package dev.vgpu.dra;

/**
 * The bounds the DRA plugin applies to what its clients send (docs/RELIABILITY.md, "DRA mode"). Each value sits far
 * above what the kubelet does: it sends one pod's claims in a call, one call per pod at a time, and keeps one health
 * stream; the transport under the sockets bounds connections, calls per connection and message sizes as in
 * device-plugin mode.
 *
 * @param claimsPerCall              claims one NodePrepareResources or NodeUnprepareResources may name; more is
 *                                   {@code INVALID_ARGUMENT} naming the bound, before any work
 * @param pendingCalls               calls accepted and not answered yet (reading claims, waiting, preparing); more
 *                                   are answered {@code RESOURCE_EXHAUSTED} at once
 * @param resultsPerClaim            allocation results of this driver one claim may carry; more is an error for that
 *                                   claim, nothing written
 * @param healthStreamsPerConnection open {@code DRAResourceHealth} streams one connection may hold; a new one beyond
 *                                   it ends that connection's oldest
 * @param healthStreams              open health streams in all; a new one beyond it ends the oldest
 */
public record DraLimits(int claimsPerCall, int pendingCalls, int resultsPerClaim, int healthStreamsPerConnection,
                        int healthStreams) {

    /**
     * The daemon's bounds: 64 claims a call (a pod naming more claims than a node has GPUs is no VM), 32 pending
     * calls (each a pod starting at once on this node), 32 results a claim (the API's own bound,
     * {@code status.allocation.devices.results}), 4 health streams a connection and 16 in all (the kubelet keeps one,
     * two while it reconnects).
     */
    public static final DraLimits DEFAULT = new DraLimits(64, 32, 32, 4, 16);

    /** Checks that every bound admits what the kubelet does. */
    public DraLimits {
        if (claimsPerCall < 1 || pendingCalls < 1 || resultsPerClaim < 1 || healthStreamsPerConnection < 1
                || healthStreams < healthStreamsPerConnection) {
            throw new IllegalArgumentException("DRA limits need at least one claim a call, one pending call, one result"
                    + " a claim, one health stream a connection and no fewer streams in all than a connection may"
                    + " hold, got " + this);
        }
    }
}
