package dev.vgpu.nvml;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * What XID events do to health: whether they are watched at all, which XIDs never change it, and how long a GPU
 * an XID marked unhealthy stays so.
 * <pre>{@code
 * XidPolicy policy = XidPolicy.defaults().withIgnored(Set.of(13L, 43L)).withRecoverAfter(Duration.ofMinutes(10));
 * policy.watch(nvml, listener);          // registers nothing when the policy is off
 * }</pre>
 *
 * @param enabled      false: no NVML event is registered at all, so no XID changes health
 * @param ignored      XIDs that are logged but never change health (an application's fault, not the GPU's)
 * @param recoverAfter a GPU marked unhealthy by an XID is healthy again after this long without another counted XID,
 *                     if NVML still answers for it; zero: never (until the process restarts)
 */
public record XidPolicy(boolean enabled, Set<Long> ignored, Duration recoverAfter) {

    /** Copies the set and checks that each XID is positive and the quiet period is not negative. */
    public XidPolicy {
        ignored = Set.copyOf(ignored);
        Objects.requireNonNull(recoverAfter, "recoverAfter");
        if (recoverAfter.isNegative()) {
            throw new IllegalArgumentException("recoverAfter must not be negative, got " + recoverAfter);
        }
        for (long xid : ignored) {
            if (xid <= 0) {
                throw new IllegalArgumentException("XID " + xid + " is not an XID (they are positive)");
            }
        }
    }

    /** Without a quiet period: unhealthy until restart. */
    public XidPolicy(boolean enabled, Set<Long> ignored) {
        this(enabled, ignored, Duration.ZERO);
    }

    /**
     * Watched, ignoring {@link XidWatcher#DEFAULT_IGNORED_XIDS}, never recovering: what the daemon does without a
     * configuration.
     */
    public static XidPolicy defaults() {
        return new XidPolicy(true, XidWatcher.DEFAULT_IGNORED_XIDS);
    }

    /** Not watched: XIDs never change health, and NVML registers no event. */
    public static XidPolicy off() {
        return new XidPolicy(false, XidWatcher.DEFAULT_IGNORED_XIDS);
    }

    /** A copy ignoring exactly these XIDs (empty: every critical XID counts). */
    public XidPolicy withIgnored(Set<Long> xids) {
        return new XidPolicy(enabled, xids, recoverAfter);
    }

    /** A copy with this quiet period before recovery (zero: never). */
    public XidPolicy withRecoverAfter(Duration quiet) {
        return new XidPolicy(enabled, ignored, quiet);
    }

    /** A copy watched or not. */
    public XidPolicy withEnabled(boolean on) {
        return new XidPolicy(on, ignored, recoverAfter);
    }

    /** Whether this XID changes health under this policy. */
    public boolean counts(long xid) {
        return enabled && !ignored.contains(xid);
    }

    /** The watcher options of this policy: its ignored XIDs and the default wait. */
    public XidWatcher.Options options() {
        return XidWatcher.Options.defaults().withIgnoredXids(ignored);
    }

    /**
     * Watches XIDs as this policy says: through {@link RecoveringNvml#watchXids(XidWatcher.Options, XidListener)}
     * when enabled; otherwise nothing is registered and no watcher starts, ever.
     *
     * @param nvml     NVML as the daemon opened it
     * @param listener told about every critical XID not ignored
     * @return true when XIDs are watched (now or once NVML comes up)
     */
    public boolean watch(RecoveringNvml nvml, XidListener listener) {
        Objects.requireNonNull(nvml, "nvml");
        Objects.requireNonNull(listener, "listener");
        if (!enabled) {
            return false;
        }
        nvml.watchXids(options(), listener);
        return true;
    }

    @Override
    public String toString() {
        return enabled ? "XID health on, ignoring XIDs " + new TreeSet<>(ignored) + ", " + (recoverAfter.isZero()
                ? "no recovery" : "recovery after " + dev.vgpu.core.internal.GoDurations.format(recoverAfter) + " quiet")
                : "XID health off";
    }
}
