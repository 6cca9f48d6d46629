package dev.vgpu.core;

/**
 * Where a {@link RescanLoop} delivers each new snapshot together with the plan that leads to it from the one
 * delivered before; in a device plugin, the plugin manager.
 */
@FunctionalInterface
public interface SnapshotSink {
    /**
     * Takes over {@code next}; called only when {@code plan} is not empty, always from the loop's thread.
     * Throwing makes the loop offer the same change again in its next round.
     *
     * @param next the snapshot that is now current
     * @param plan what changed, as {@link Reconciler#plan} computes it from the previously delivered snapshot
     */
    void apply(Snapshot next, Plan plan);
}
