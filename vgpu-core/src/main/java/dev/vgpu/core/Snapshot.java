package dev.vgpu.core;

import dev.vgpu.core.spi.Discovery;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * An immutable picture of every advertisable device after one scan, with the indexes that allocation and
 * health need, computed once.
 *
 * <p>Built from the discoveries of several sources in their load order. Conflicts are settled in that order:
 * a device id claimed by an earlier source, or a resource name already produced by an earlier source (it
 * would share one socket), makes the later source's device a {@link #skipped() skip} with that reason.
 * <pre>{@code
 * Snapshot snapshot = Snapshot.builder()
 *         .add("passthrough", passthroughDiscovery)
 *         .add("vendor-vfio", vendorDiscovery)
 *         .build();
 * }</pre>
 * Safe to share between threads.
 */
public final class Snapshot {

    private static final Comparator<Device> BY_ID = Comparator.comparing(Device::id);
    private static final Snapshot EMPTY = new Builder().build();

    private final SortedMap<ResourceName, Resource> resources;
    private final List<Skipped> skipped;
    /** Source name → skips its discovery counted without listing them. */
    private final Map<String, Integer> unlistedSkips;
    private final Map<String, Device> byId;
    private final Map<String, List<Device>> byGroup;
    private final Map<PciAddress, List<Device>> byParent;

    private Snapshot(SortedMap<ResourceName, Resource> resources, List<Skipped> skipped,
                     Map<String, Integer> unlistedSkips) {
        this.resources = Collections.unmodifiableSortedMap(resources);
        this.skipped = List.copyOf(skipped);
        this.unlistedSkips = Map.copyOf(unlistedSkips);
        Map<String, Device> ids = new HashMap<>();
        Map<String, List<Device>> groups = new HashMap<>();
        Map<PciAddress, List<Device>> parents = new HashMap<>();
        for (Resource resource : resources.values()) {
            for (Device device : resource.devices()) {
                ids.put(device.id(), device);
                // a group holds one device nearly always (one per VF): a list of one, not of ten
                device.iommuGroup().ifPresent(g -> groups.computeIfAbsent(g, k -> new ArrayList<>(1)).add(device));
                device.parent().ifPresent(p -> parents.computeIfAbsent(p, k -> new ArrayList<>()).add(device));
            }
        }
        groups.replaceAll((g, list) -> sortedCopy(list));
        parents.replaceAll((p, list) -> sortedCopy(list));
        this.byId = Map.copyOf(ids);
        this.byGroup = Map.copyOf(groups);
        this.byParent = Map.copyOf(parents);
    }

    private static List<Device> sortedCopy(List<Device> list) {
        if (list.size() == 1) {
            return Collections.singletonList(list.get(0));
        }
        Device[] sorted = list.toArray(new Device[0]);
        Arrays.sort(sorted, BY_ID);
        return Collections.unmodifiableList(Arrays.asList(sorted));
    }

    /** A snapshot with nothing in it. */
    public static Snapshot empty() {
        return EMPTY;
    }

    /** Starts a snapshot; add discoveries in source load order. */
    public static Builder builder() {
        return new Builder();
    }

    /** Every resource, sorted by name. */
    public SortedMap<ResourceName, Resource> resources() {
        return resources;
    }

    /** One resource. */
    public Optional<Resource> resource(ResourceName name) {
        return Optional.ofNullable(resources.get(name));
    }

    /**
     * Devices the sources skipped, and devices dropped by conflicts, in discovery order. A source may list only a
     * sample of its skips ({@link Discovery#unlistedSkips()}); {@link #skippedCount()} counts them all.
     */
    public List<Skipped> skipped() {
        return skipped;
    }

    /** Every skip, listed in {@link #skipped()} or only counted. */
    public int skippedCount() {
        return skipped.size() + unlistedSkips.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** Every skip of one source, listed or only counted. */
    public int skippedCount(String source) {
        return (int) skipped.stream().filter(s -> s.source().equals(source)).count()
                + unlistedSkips.getOrDefault(source, 0);
    }

    /** Source name → how many of its skips {@link #skipped()} does not list; sources that list all are absent. */
    public Map<String, Integer> unlistedSkips() {
        return unlistedSkips;
    }

    /** The device with this id (BDF or UUID), in any resource. */
    public Optional<Device> device(String id) {
        return Optional.ofNullable(byId.get(id));
    }

    /** The IOMMU group of an advertised device (by BDF or UUID). */
    public Optional<String> iommuGroup(String id) {
        Device device = byId.get(id);
        return device == null ? Optional.empty() : device.iommuGroup();
    }

    /** Advertised devices in an IOMMU group, sorted by id; empty when none. */
    public List<Device> groupMembers(String group) {
        return byGroup.getOrDefault(group, List.of());
    }

    /** Advertised devices whose parent is this physical GPU (its VFs or mdevs), sorted by id. */
    public List<Device> childrenOf(PciAddress physicalGpu) {
        return byParent.getOrDefault(physicalGpu, List.of());
    }

    /** The devices one source contributed, as a discovery (used to keep them when its next scan fails). */
    public Discovery discoveryOf(String source) {
        Discovery.Builder out = Discovery.builder();
        for (Resource resource : resources.values()) {
            if (resource.source().equals(source)) {
                resource.devices().forEach(out::add);
            }
        }
        skipped.stream().filter(s -> s.source().equals(source)).forEach(out::skip);
        return out.unlisted(unlistedSkips.getOrDefault(source, 0)).build();
    }

    /** The number of advertised devices. */
    public int deviceCount() {
        return byId.size();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Snapshot other && resources.equals(other.resources) && skipped.equals(other.skipped)
                && unlistedSkips.equals(other.unlistedSkips);
    }

    @Override
    public int hashCode() {
        return resources.hashCode();
    }

    @Override
    public String toString() {
        return "Snapshot[" + resources.size() + " resources, " + byId.size() + " devices, " + skippedCount()
                + " skipped]";
    }

    /** Collects discoveries in source order; not thread-safe. */
    public static final class Builder {
        private final Map<String, Device> claimedIds = new HashMap<>();
        private final Map<ResourceName, String> resourceOwner = new HashMap<>();
        private final Map<ResourceName, List<Device>> devices = new LinkedHashMap<>();
        private final List<Skipped> skipped = new ArrayList<>();
        private final Map<String, Integer> unlistedSkips = new HashMap<>();

        private Builder() {
        }

        /**
         * Adds one source's discovery. Devices must carry {@code source} as their source name.
         *
         * @throws IllegalArgumentException when a device names another source
         */
        public Builder add(String source, Discovery discovery) {
            addKeepingUnrenamed(source, discovery, Map.of());
            return this;
        }

        /**
         * As {@link #add}, for an adapter whose resource names are attributes of each device rather than sockets
         * (the DRA plugin publishes every device on its own): a device that a rename would put under a name another
         * source produces, or beside devices attached otherwise, which {@link #add} makes a skip ("it would share one
         * socket"), is added under its source's own name instead, as {@code unrenamed} holds it by id, when that one
         * fits. Devices are never dropped for a rename in that mode.
         *
         * @param unrenamed each device of the discovery as its source named it, by id (before the operator's rules)
         * @return the devices added under their source's name instead of the rename's, in discovery order
         * @throws IllegalArgumentException when a device names another source
         */
        public List<Device> addKeepingUnrenamed(String source, Discovery discovery, Map<String, Device> unrenamed) {
            List<Device> kept = new ArrayList<>();
            for (Device device : discovery.devices()) {
                if (!device.source().equals(source)) {
                    throw new IllegalArgumentException("device " + device.id() + " claims source "
                            + device.source() + " but was discovered by " + source);
                }
                Device earlier = claimedIds.get(device.id());
                if (earlier != null) {
                    skipped.add(new Skipped(device.id(), source, earlier.source().equals(source)
                            ? "listed twice by " + source + " (under " + earlier.resource() + " and "
                                    + device.resource() + ")"
                            : "device id already claimed by source " + earlier.source() + " under "
                                    + earlier.resource()));
                    continue;
                }
                String conflict = conflict(source, device);
                Device own = unrenamed.get(device.id());
                if (conflict != null && own != null && !own.resource().equals(device.resource())
                        && own.source().equals(source) && conflict(source, own) == null) {
                    kept.add(own);
                    device = own;
                    conflict = null;
                }
                if (conflict != null) {
                    skipped.add(new Skipped(device.id(), source, conflict));
                } else {
                    claimedIds.put(device.id(), device);
                    resourceOwner.put(device.resource(), source);
                    devices.computeIfAbsent(device.resource(), r -> new ArrayList<>()).add(device);
                }
            }
            skipped.addAll(discovery.skipped());
            if (discovery.unlistedSkips() > 0) {
                unlistedSkips.merge(source, discovery.unlistedSkips(), Math::addExact);
            }
            return kept;
        }

        /** Why {@code device} cannot join its resource: another source's, or attached otherwise; null when it can. */
        private String conflict(String source, Device device) {
            String owner = resourceOwner.get(device.resource());
            if (owner != null && !owner.equals(source)) {
                return "resource " + device.resource() + " is already produced by source " + owner
                        + " (it would share one socket)";
            }
            if (owner != null && devices.get(device.resource()).get(0).attachment() != device.attachment()) {
                return "resource " + device.resource() + " mixes attachments " + device.attachment() + " and "
                        + devices.get(device.resource()).get(0).attachment();
            }
            return null;
        }

        /** The immutable snapshot. */
        public Snapshot build() {
            SortedMap<ResourceName, Resource> resources = new TreeMap<>();
            devices.forEach((name, list) -> resources.put(name, Resource.of(list)));
            return new Snapshot(resources, skipped, unlistedSkips);
        }
    }
}
