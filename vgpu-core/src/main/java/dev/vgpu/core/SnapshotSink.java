package dev.vgpu.daemon;

import dev.vgpu.core.Plan;
import dev.vgpu.core.Snapshot;

/** Where the rescan loop delivers each new snapshot and the plan that leads to it (the plugin manager). */
@FunctionalInterface
interface SnapshotSink {
    void apply(Snapshot next, Plan plan);
}
