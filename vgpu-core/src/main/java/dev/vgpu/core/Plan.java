package dev.vgpu.core;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What must change to go from one snapshot to the next: removals first, then updates, then additions, each
 * sorted by resource name. Produced by {@link Reconciler#plan(Snapshot, Snapshot)}.
 *
 * @param changes the changes in the order they must be applied
 */
public record Plan(List<Change> changes) {

    /** Copies the list. */
    public Plan {
        changes = List.copyOf(changes);
    }

    /** True when nothing changes. */
    public boolean isEmpty() {
        return changes.isEmpty();
    }

    /** The names of every resource this plan touches. */
    public Set<ResourceName> touched() {
        Set<ResourceName> names = new TreeSet<>();
        changes.forEach(c -> names.add(c.resource()));
        return names;
    }

    /**
     * The plan in words, for logs and output: {@code add nvidia.com/A (2 devices); remove nvidia.com/B}, or
     * {@code no changes}.
     */
    @Override
    public String toString() {
        if (changes.isEmpty()) {
            return "no changes";
        }
        StringBuilder out = new StringBuilder();
        for (Change change : changes) {
            out.append(out.length() == 0 ? "" : "; ");
            if (change instanceof Add add) {
                out.append("add ").append(add.resource()).append(" (").append(devices(add.next().ids().size()))
                        .append(')');
            } else if (change instanceof Update update) {
                out.append("update ").append(update.resource()).append(" (").append(devices(update.next().ids().size()))
                        .append(": +").append(update.addedIds().size()).append(" -").append(update.removedIds().size())
                        .append(')');
            } else {
                out.append("remove ").append(change.resource());
            }
        }
        return out.toString();
    }

    private static String devices(int count) {
        return count + (count == 1 ? " device" : " devices");
    }

    /** The result of applying this plan to a map of resources (the original is not modified). */
    public SortedMap<ResourceName, Resource> applyTo(Map<ResourceName, Resource> resources) {
        SortedMap<ResourceName, Resource> out = new TreeMap<>(resources);
        for (Change change : changes) {
            if (change instanceof Add add) {
                out.put(add.resource(), add.next());
            } else if (change instanceof Update update) {
                out.put(update.resource(), update.next());
            } else {
                out.remove(change.resource());
            }
        }
        return out;
    }

    /** One change to one resource. */
    public sealed interface Change permits Add, Update, Remove {
        /** The resource changed. */
        ResourceName resource();
    }

    /**
     * A new resource: start serving it.
     *
     * @param next the resource to serve
     */
    public record Add(Resource next) implements Change {
        /** Validates. */
        public Add {
            Objects.requireNonNull(next, "next");
        }

        @Override
        public ResourceName resource() {
            return next.name();
        }
    }

    /**
     * A resource whose device values differ: swap its device list.
     *
     * @param previous what was served
     * @param next     what to serve now
     */
    public record Update(Resource previous, Resource next) implements Change {
        /** Validates that both sides name one resource. */
        public Update {
            if (!previous.name().equals(next.name())) {
                throw new IllegalArgumentException("update across resources: " + previous.name() + " → " + next.name());
            }
        }

        @Override
        public ResourceName resource() {
            return next.name();
        }

        /** Ids served now that were not before, sorted. */
        public Set<String> addedIds() {
            Set<String> ids = new TreeSet<>(next.ids());
            ids.removeAll(previous.ids());
            return ids;
        }

        /** Ids served before that are gone now, sorted. */
        public Set<String> removedIds() {
            Set<String> ids = new TreeSet<>(previous.ids());
            ids.removeAll(next.ids());
            return ids;
        }
    }

    /**
     * A resource that vanished: retire it.
     *
     * @param previous what was served
     */
    public record Remove(Resource previous) implements Change {
        /** Validates. */
        public Remove {
            Objects.requireNonNull(previous, "previous");
        }

        @Override
        public ResourceName resource() {
            return previous.name();
        }
    }
}
