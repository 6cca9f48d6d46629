package dev.vgpu.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;

/**
 * Compares two snapshots. Pure and deterministic: the same inputs give the same {@link Plan}, and a resource
 * that is equal in both (same source, attachment and device values) never appears in it.
 */
public final class Reconciler {

    private Reconciler() {
    }

    /** The changes that turn {@code before} into {@code after}. */
    public static Plan plan(Snapshot before, Snapshot after) {
        return plan(before.resources(), after.resources());
    }

    /** The changes that turn one sorted resource map into another. */
    public static Plan plan(SortedMap<ResourceName, Resource> before, SortedMap<ResourceName, Resource> after) {
        List<Plan.Change> removes = new ArrayList<>();
        List<Plan.Change> updates = new ArrayList<>();
        List<Plan.Change> adds = new ArrayList<>();
        for (Map.Entry<ResourceName, Resource> old : before.entrySet()) {
            Resource next = after.get(old.getKey());
            if (next == null) {
                removes.add(new Plan.Remove(old.getValue()));
            } else if (!next.equals(old.getValue())) {
                updates.add(new Plan.Update(old.getValue(), next));
            }
        }
        for (Map.Entry<ResourceName, Resource> next : after.entrySet()) {
            if (!before.containsKey(next.getKey())) {
                adds.add(new Plan.Add(next.getValue()));
            }
        }
        List<Plan.Change> all = new ArrayList<>(removes.size() + updates.size() + adds.size());
        all.addAll(removes);
        all.addAll(updates);
        all.addAll(adds);
        return new Plan(all);
    }
}
