package dev.vgpu.kubelet.api.transport;

import java.time.Duration;
import java.util.Objects;

/**
 * The bounds every server of a {@link UnixDomainTransport} applies (docs/RELIABILITY.md, "The gRPC servers").
 * Each value sits far above what the kubelet does: it keeps one connection per plugin, one ListAndWatch stream on
 * it for as long as the plugin is registered, and sends Allocate and GetPreferredAllocation one at a time.
 *
 * @param callsPerConnection open calls one connection may have at once (HTTP/2 {@code MAX_CONCURRENT_STREAMS})
 * @param pendingCalls       calls of the whole transport whose handler has not returned yet (queued or running
 *                           on the call threads); more are answered {@code RESOURCE_EXHAUSTED} at once
 * @param resetsPerWindow    stream resets one connection may send in {@code resetWindow} before it is closed with
 *                           {@code GOAWAY} (HTTP/2 rapid reset)
 * @param resetWindow        the window of {@code resetsPerWindow}
 * @param connectionIdle     how long a connection without any call stays open (the kubelet's never is: its
 *                           ListAndWatch stream is a call)
 * @param inboundMessageBytes the largest request message
 * @param inboundMetadataBytes the largest request header block
 */
public record ServerLimits(int callsPerConnection, int pendingCalls, int resetsPerWindow, Duration resetWindow,
                           Duration connectionIdle, int inboundMessageBytes, int inboundMetadataBytes) {

    /** The daemon's bounds; the reasons for each value are in docs/RELIABILITY.md. */
    public static final ServerLimits DEFAULT = new ServerLimits(16, 64, 100, Duration.ofSeconds(10),
            Duration.ofMinutes(1), 4 * 1024 * 1024, 8 * 1024);

    public ServerLimits {
        Objects.requireNonNull(resetWindow, "resetWindow");
        Objects.requireNonNull(connectionIdle, "connectionIdle");
        if (callsPerConnection < 2 || pendingCalls < 1 || resetsPerWindow < 1 || inboundMessageBytes < 1
                || inboundMetadataBytes < 1) {
            throw new IllegalArgumentException("server limits need at least 2 calls per connection (the kubelet's "
                    + "stream and one call) and positive counts, got " + callsPerConnection + ", " + pendingCalls
                    + ", " + resetsPerWindow + ", " + inboundMessageBytes + ", " + inboundMetadataBytes);
        }
        if (resetWindow.toSeconds() < 1 || connectionIdle.isNegative() || connectionIdle.isZero()) {
            throw new IllegalArgumentException("the reset window needs at least 1 s and the idle time a positive "
                    + "duration, got " + resetWindow + " and " + connectionIdle);
        }
    }

    /** These limits with another bound on pending calls. */
    public ServerLimits withPendingCalls(int calls) {
        return new ServerLimits(callsPerConnection, calls, resetsPerWindow, resetWindow, connectionIdle,
                inboundMessageBytes, inboundMetadataBytes);
    }

    /** These limits with another idle time for connections without calls. */
    public ServerLimits withConnectionIdle(Duration idle) {
        return new ServerLimits(callsPerConnection, pendingCalls, resetsPerWindow, resetWindow, idle,
                inboundMessageBytes, inboundMetadataBytes);
    }
}
