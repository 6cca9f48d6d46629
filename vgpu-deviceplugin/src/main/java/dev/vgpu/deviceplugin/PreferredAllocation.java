package dev.vgpu.deviceplugin;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.Function;

/**
 * The preferred-allocation policy: must-include devices first, then fill from one NUMA node when one node can
 * hold the whole request, else in the kubelet's order.
 *
 * <p>Candidate nodes are tried in this order: the nodes of the must-include devices as they appear, then the
 * other nodes in the order the kubelet lists them. A node qualifies when the devices already picked on it plus
 * its not yet picked available devices reach the allocation size. Devices whose NUMA node is unknown (or that
 * this plugin does not know) belong to no node. Pure and thread-safe.
 */
final class PreferredAllocation {

    private PreferredAllocation() {
    }

    /**
     * The preferred device ids for one container.
     *
     * @param available   the kubelet's available ids, in its order
     * @param mustInclude ids that must be part of the answer
     * @param size        the number of devices wanted
     * @param numaOf      the NUMA node of a device id, empty when unknown
     * @throws IllegalArgumentException when there are more must-include devices than {@code size}, or
     *                                  {@code size} is negative
     */
    static List<String> choose(List<String> available, List<String> mustInclude, int size,
                               Function<String, OptionalInt> numaOf) {
        if (size < 0) {
            throw new IllegalArgumentException("allocation size " + size + " is negative");
        }
        Set<String> picked = new LinkedHashSet<>(mustInclude);
        if (picked.size() > size) {
            throw new IllegalArgumentException(picked.size() + " must-include devices " + picked
                    + " exceed the allocation size " + size);
        }
        if (picked.size() < size) {
            fillFromOneNode(available, picked, size, numaOf);
        }
        for (String id : available) {
            if (picked.size() >= size) {
                break;
            }
            picked.add(id);
        }
        return List.copyOf(picked);
    }

    private static void fillFromOneNode(List<String> available, Set<String> picked, int size,
                                        Function<String, OptionalInt> numaOf) {
        Map<Integer, List<String>> byNode = new LinkedHashMap<>();
        for (String id : available) {
            OptionalInt node = numaOf.apply(id);
            if (node.isPresent() && !picked.contains(id)) {
                List<String> bucket = byNode.computeIfAbsent(node.getAsInt(), n -> new ArrayList<>());
                if (!bucket.contains(id)) {
                    bucket.add(id);
                }
            }
        }
        Map<Integer, Integer> pickedOnNode = new LinkedHashMap<>();
        for (String id : picked) {
            OptionalInt node = numaOf.apply(id);
            if (node.isPresent()) {
                pickedOnNode.merge(node.getAsInt(), 1, Integer::sum);
            }
        }
        Set<Integer> candidates = new LinkedHashSet<>(pickedOnNode.keySet());
        candidates.addAll(byNode.keySet());
        for (int node : candidates) {
            List<String> bucket = byNode.getOrDefault(node, List.of());
            if (pickedOnNode.getOrDefault(node, 0) + bucket.size() >= size) {
                for (String id : bucket) {
                    if (picked.size() >= size) {
                        return;
                    }
                    picked.add(id);
                }
                return;
            }
        }
    }
}
